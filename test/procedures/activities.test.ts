import { expect } from 'chai';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { ACTIVITY_CONFLICT } from '../../src/errors/app-errors';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { badRequest, rejectedWith } from '../support/trpc';

// activities.record, activities.batch and contacts.activities through createCaller: the same
// procedures REST serves, with the intake's clock given in the context.

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date(Date.UTC(2026, 11, 2, 9, 30));

function callerAt(key: string, now = NOW) {
  return createCaller(createCallerContext({ db: testDb(), apiKey: key, activities: { retentionDays: 30, now: () => now } }));
}

describe('activities procedures', () => {
  it('records, answers a duplicate, and lists on the contact, by the context\'s clock', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    const { activity } = await callerAt(key).activities.record({ contact: { id: contact.id }, name: 'seen', id: 'a-1', properties: { n: 1 } });
    expect(activity).to.deep.equal({ id: 'a-1', contactId: contact.id, name: 'seen', occurredAt: NOW.toISOString(), duplicate: false });
    const later = new Date(NOW.getTime() + 1000);
    const again = await callerAt(key, later).activities.record({ contact: { id: contact.id }, name: 'seen', id: 'a-1', properties: { n: 1 } });
    expect(again.activity).to.deep.equal({ ...activity, duplicate: true });
    const page = await callerAt(key).contacts.activities({ id: contact.id });
    expect(page).to.deep.equal({ activities: [{ id: 'a-1', name: 'seen', properties: { n: 1 }, occurredAt: NOW.toISOString(), receivedAt: NOW.toISOString() }], nextCursor: null });
  });

  it('counts the retention from the context\'s setting', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    const occurredAt = new Date(NOW.getTime() - 31 * DAY).toISOString();
    await badRequest(callerAt(key).activities.record({ contact: { id: contact.id }, name: 'old', occurredAt }), 'occurredAt');
    await badRequest(callerAt(key).activities.batch({ activities: [{ contact: { id: contact.id }, name: 'ok' }, { contact: { id: contact.id }, name: 'old', occurredAt }] }), 'activities.1.occurredAt');
  });

  it('refuses a conflicting id with activity_conflict and an unknown contact with not_found', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    await callerAt(key).activities.record({ contact: { id: contact.id }, name: 'seen', id: 'x' });
    await rejectedWith(callerAt(key).activities.record({ contact: { id: contact.id }, name: 'other', id: 'x' }), 'CONFLICT', { error: `id: ${ACTIVITY_CONFLICT}`, code: 'activity_conflict' });
    await rejectedWith(callerAt(key).activities.record({ contact: { id: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }, name: 'seen' }), 'NOT_FOUND', { error: 'Contact not found', code: 'not_found' });
    await rejectedWith(callerAt(key).contacts.activities({ id: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }), 'NOT_FOUND', { error: 'Contact not found', code: 'not_found' });
  });
});
