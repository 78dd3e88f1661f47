import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../../../src/errors/app-errors';
import type { EventDto } from '../../../src/schemas/event';
import {
  addTags,
  batchUpsertContacts,
  createContact,
  deleteContact,
  removeTags,
  updateContact,
  updateSubscriptions,
  upsertContact,
} from '../../../src/services/contacts/contact-operations';
import { getContact } from '../../../src/services/contacts/find-contact';
import { enrollByIds } from '../../../src/services/sequences/enroll-by-ids';
import { enrollContact } from '../../../src/services/sequences/enroll-contact';
import { enrollmentStatus } from '../../../src/services/sequences/enrollment-status';
import { moveRun } from '../../../src/services/sequences/run-transitions';
import { unenroll } from '../../../src/services/sequences/unenroll';
import { captureQueries, testDb } from '../../support/db';
import { buildContact, buildSequence, buildTenant } from '../../support/factories';
import { contactOf, eventCount, eventsOf, typesOf } from './support';

// Each write path records its events with the change, exactly when something changed, with the
// payloads of docs/webhooks.md "The events feed".

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectEnvelope(event: EventDto, accountId: string) {
  expect(event.id).to.match(UUID);
  expect(event.accountId).to.equal(accountId);
  expect(event.createdAt).to.match(ISO);
}

const db = () => testDb();

describe('events: what each write records', () => {
  describe('contacts', () => {
    it('records contact.created with the contact as the API returned it', async () => {
      const { accountId } = await buildTenant();
      let created: Awaited<ReturnType<typeof createContact>> | undefined;
      const events = await eventsOf(accountId, async () => {
        created = await createContact(db(), { accountId, email: 'Ada@Example.com', firstName: 'Ada', tags: ['vip'] });
      });
      expect(typesOf(events)).to.deep.equal(['contact.created']);
      expectEnvelope(events[0]!, accountId);
      expect(events[0]!.data).to.deep.equal({ contact: created });
      expect(events[0]!.data).to.deep.equal({ contact: await getContact(db(), { accountId, id: created!.id }) });
    });

    it('records contact.updated with the changed fields, and subscription_changed beside it', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, { firstName: 'Ada' });
      let updated: Awaited<ReturnType<typeof updateContact>> | undefined;
      const events = await eventsOf(accountId, async () => {
        updated = await updateContact(db(), {
          accountId,
          id: contact.id,
          firstName: 'Augusta',
          tags: ['a'],
          emailSubscriptionStatus: 'unsubscribed',
        });
      });
      expect(events.map((e) => e.data)).to.deep.equal([
        { contact: updated, changedFields: ['firstName', 'tags', 'emailSubscriptionStatus'] },
        { contact: updated, channel: 'email', from: 'subscribed', to: 'unsubscribed' },
      ]);
      expect(typesOf(events)).to.deep.equal(['contact.updated', 'contact.subscription_changed']);
    });

    it('records one subscription_changed per channel that changed', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, { whatsappSubscriptionStatus: 'unsubscribed' });
      const events = await eventsOf(accountId, () =>
        updateSubscriptions(db(), {
          accountId,
          id: contact.id,
          emailSubscriptionStatus: 'unsubscribed',
          whatsappSubscriptionStatus: 'subscribed',
        }),
      );
      expect(typesOf(events)).to.deep.equal([
        'contact.updated',
        'contact.subscription_changed',
        'contact.subscription_changed',
      ]);
      expect(events[0]!.data).to.deep.include({ changedFields: ['emailSubscriptionStatus', 'whatsappSubscriptionStatus'] });
      expect(events.slice(1).map((e) => e.data)).to.deep.equal([
        { contact: contactOf(events[0]!), channel: 'email', from: 'subscribed', to: 'unsubscribed' },
        { contact: contactOf(events[0]!), channel: 'whatsapp', from: 'unsubscribed', to: 'subscribed' },
      ]);
    });

    it('records contact.updated for tags added and removed, naming tags', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, { tags: ['a'] });
      const added = await eventsOf(accountId, () => addTags(db(), { accountId, id: contact.id, tags: ['b'] }));
      const removed = await eventsOf(accountId, () => removeTags(db(), { accountId, id: contact.id, tags: ['a'] }));
      expect(added.map((e) => [e.type, e.data])).to.deep.equal([
        ['contact.updated', { contact: { ...contactOf(added[0]!), tags: ['a', 'b'] }, changedFields: ['tags'] }],
      ]);
      expect(removed.map((e) => e.data)).to.deep.equal([
        { contact: await getContact(db(), { accountId, id: contact.id }), changedFields: ['tags'] },
      ]);
    });

    it('records nothing for writes that change nothing', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, {
        email: 'same@x.io',
        firstName: 'Ada',
        tags: ['a'],
        customFields: { plan: 'pro' },
      });
      const before = await eventCount(accountId);
      await upsertContact(db(), { accountId, email: 'SAME@x.io', firstName: 'Ada', tags: ['a'], customFields: { plan: 'pro' } });
      await batchUpsertContacts(db(), { accountId, contacts: [{ email: 'same@x.io', firstName: 'Ada' }] });
      await addTags(db(), { accountId, id: contact.id, tags: ['a'] });
      await removeTags(db(), { accountId, id: contact.id, tags: ['not-there'] });
      await updateContact(db(), { accountId, id: contact.id, firstName: 'Ada', customFields: { plan: 'pro' } });
      await updateSubscriptions(db(), { accountId, id: contact.id, emailSubscriptionStatus: 'subscribed' });
      expect(await eventCount(accountId)).to.equal(before);
    });

    it('records created on an upsert that creates, and updated with the fields it changed', async () => {
      const { accountId } = await buildTenant();
      const first = await eventsOf(accountId, () => upsertContact(db(), { accountId, email: 'u@x.io', firstName: 'A' }));
      let result: Awaited<ReturnType<typeof upsertContact>> | undefined;
      const second = await eventsOf(accountId, async () => {
        result = await upsertContact(db(), { accountId, email: 'u@x.io', lastName: 'B', customFields: { n: 1 } });
      });
      expect(typesOf(first)).to.deep.equal(['contact.created']);
      expect(second.map((e) => [e.type, e.data])).to.deep.equal([
        ['contact.updated', { contact: result!.contact, changedFields: ['lastName', 'customFields'] }],
      ]);
    });

    it('records one event per contact in a batch, items on one email folded into one', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'old@x.io' });
      const events = await eventsOf(accountId, () =>
        batchUpsertContacts(db(), {
          accountId,
          contacts: [
            { email: 'new@x.io', firstName: 'One' },
            { email: 'old@x.io', lastName: 'Changed' },
            { email: 'NEW@x.io', lastName: 'Two' },
            { email: 'untouched@x.io' },
          ],
        }),
      );
      const byEmail = new Map(events.map((e) => [(e.data as { contact: { email: string } }).contact.email, e]));
      expect(events).to.have.length(3);
      expect(byEmail.get('new@x.io')!.type).to.equal('contact.created');
      expect(byEmail.get('new@x.io')!.data).to.deep.include({
        contact: await getContact(db(), { accountId, id: (byEmail.get('new@x.io')!.data as { contact: { id: string } }).contact.id }),
      });
      expect(byEmail.get('old@x.io')!.type).to.equal('contact.updated');
      expect(byEmail.get('old@x.io')!.data).to.deep.include({ changedFields: ['lastName'] });
      expect(byEmail.get('untouched@x.io')!.type).to.equal('contact.created');
    });

    it('records contact.deleted with the id and email, and nothing for a contact that is not there', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'Gone@X.io' });
      const events = await eventsOf(accountId, () => deleteContact(db(), { accountId, id: contact.id }));
      expect(events.map((e) => [e.type, e.data])).to.deep.equal([
        ['contact.deleted', { id: contact.id, email: 'Gone@X.io' }],
      ]);
      const again = await eventsOf(accountId, () => deleteContact(db(), { accountId, id: contact.id }).catch(() => undefined));
      expect(again).to.deep.equal([]);
    });
  });

  describe('runs', () => {
    async function setup(options: { maxActiveRuns?: number } = {}) {
      const tenant = await buildTenant(options);
      const sequence = await buildSequence(tenant.accountId, 'active');
      return { accountId: tenant.accountId, sequenceId: sequence.id };
    }

    async function latestRun(accountId: string, sequenceId: string, contactId: string) {
      const { run } = await enrollmentStatus(db(), { accountId, sequenceId, contactId });
      return { ...run!, sequenceId, contactId };
    }

    it('records contact.created then run.created on a trigger, with the run as the API returns it', async () => {
      const { accountId, sequenceId } = await setup();
      let outcome: Awaited<ReturnType<typeof enrollContact>> | undefined;
      const events = await eventsOf(accountId, async () => {
        outcome = await enrollContact(db(), { accountId, sequenceId, contact: { email: 't@x.io' } });
      });
      expect(typesOf(events)).to.deep.equal(['contact.created', 'run.created']);
      const { contactId } = outcome!;
      expect(events[0]!.data).to.deep.equal({ contact: await getContact(db(), { accountId, id: contactId }) });
      expect(events[1]!.data).to.deep.equal({ run: await latestRun(accountId, sequenceId, contactId) });
      expect((events[1]!.data as { run: { status: string } }).run.status).to.equal('pending');
    });

    it('records nothing for a trigger of the same contact while its run is active', async () => {
      const { accountId, sequenceId } = await setup();
      await enrollContact(db(), { accountId, sequenceId, contact: { email: 't@x.io', firstName: 'A' } });
      const events = await eventsOf(accountId, () =>
        enrollContact(db(), { accountId, sequenceId, contact: { email: 't@x.io', firstName: 'A' } }),
      );
      expect(events).to.deep.equal([]);
    });

    it('keeps the contact\'s events when the run is refused: limit reached', async () => {
      const { accountId, sequenceId } = await setup({ maxActiveRuns: 0 });
      const events = await eventsOf(accountId, () =>
        enrollContact(db(), { accountId, sequenceId, contact: { email: 'l@x.io' } }),
      );
      expect(typesOf(events)).to.deep.equal(['contact.created']);
    });

    it('records run.created for each contact enrolled by id, none for skipped or unknown ids', async () => {
      const { accountId, sequenceId } = await setup();
      const a = await buildContact(accountId);
      const b = await buildContact(accountId);
      await enrollByIds(db(), { accountId, sequenceId, contactIds: [a.id] });
      const events = await eventsOf(accountId, () =>
        enrollByIds(db(), { accountId, sequenceId, contactIds: [a.id, b.id, randomUUID()] }),
      );
      expect(events.map((e) => [e.type, e.data])).to.deep.equal([
        ['run.created', { run: await latestRun(accountId, sequenceId, b.id) }],
      ]);
    });

    it('records run.status_changed from the old status when unenroll cancels, nothing when nothing is active', async () => {
      const { accountId, sequenceId } = await setup();
      const contact = await buildContact(accountId);
      await enrollByIds(db(), { accountId, sequenceId, contactIds: [contact.id] });
      const events = await eventsOf(accountId, () => unenroll(db(), { accountId, sequenceId, contactIds: [contact.id] }));
      const run = await latestRun(accountId, sequenceId, contact.id);
      expect(run.status).to.equal('cancelled');
      expect(events.map((e) => [e.type, e.data])).to.deep.equal([
        ['run.status_changed', { run, from: 'pending', to: 'cancelled' }],
      ]);
      const again = await eventsOf(accountId, () => unenroll(db(), { accountId, sequenceId, contactIds: [contact.id] }));
      expect(again).to.deep.equal([]);
    });

    it('records run.status_changed for every transition, and nothing for a refused one', async () => {
      const { accountId, sequenceId } = await setup();
      const contact = await buildContact(accountId);
      await enrollByIds(db(), { accountId, sequenceId, contactIds: [contact.id] });
      const { id: runId } = await latestRun(accountId, sequenceId, contact.id);
      const events = await eventsOf(accountId, async () => {
        await moveRun(db(), { accountId, runId, status: 'running' });
        await moveRun(db(), { accountId, runId, status: 'completed' });
        await moveRun(db(), { accountId, runId, status: 'running' }).catch(() => undefined);
      });
      const run = await latestRun(accountId, sequenceId, contact.id);
      expect(events.map((e) => [e.type, (e.data as { from: string }).from, (e.data as { to: string }).to])).to.deep.equal([
        ['run.status_changed', 'pending', 'running'],
        ['run.status_changed', 'running', 'completed'],
      ]);
      expect(events[1]!.data).to.deep.include({ run });
    });

    it('enrolls 500 contacts, and records their 500 events, in as many statements as 5', async () => {
      const { accountId, sequenceId } = await setup();
      const contacts = Array.from({ length: 505 }, (_, i) => ({ email: `bulk-${i}@x.io` }));
      for (let i = 0; i < contacts.length; i += 100) {
        await batchUpsertContacts(db(), { accountId, contacts: contacts.slice(i, i + 100) });
      }
      const ids = ((await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ?', {
        replacements: [accountId],
        type: 'SELECT',
      })) as Array<{ id: string }>).map((row) => row.id);
      const before = await eventCount(accountId);
      const five = await captureQueries(() => enrollByIds(db(), { accountId, sequenceId, contactIds: ids.slice(0, 5) }));
      const many = await captureQueries(() => enrollByIds(db(), { accountId, sequenceId, contactIds: ids.slice(5) }));
      expect(many.queries.length).to.equal(five.queries.length);
      expect(await eventCount(accountId)).to.equal(before + 505);
    });
  });

  describe('atomicity', () => {
    it('leaves no event when the change is rolled back', async () => {
      const { accountId } = await buildTenant();
      const fields = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]));
      await buildContact(accountId, { email: 'full@x.io', customFields: fields });
      const before = await eventCount(accountId);
      const more = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`m${i}`, i]));
      const error = await batchUpsertContacts(db(), {
        accountId,
        contacts: [{ email: 'fresh@x.io' }, { email: 'full@x.io', customFields: more }],
      }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ValidationError);
      expect(await eventCount(accountId)).to.equal(before);
    });

    it('leaves no change when its events cannot be recorded', async () => {
      const { accountId } = await buildTenant();
      const { sequelize } = testDb();
      const original = sequelize.query;
      sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
        const sql = typeof args[0] === 'string' ? args[0] : '';
        if (sql.startsWith('INSERT INTO events')) return Promise.reject(new Error('events table unavailable'));
        return original.apply(this, args);
      } as typeof original;
      try {
        const error = await createContact(db(), { accountId, email: 'never@x.io' }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(Error);
      } finally {
        sequelize.query = original;
      }
      const [row] = (await sequelize.query('SELECT COUNT(*) AS n FROM contacts WHERE account_id = ?', {
        replacements: [accountId],
        type: 'SELECT',
      })) as Array<{ n: number | string }>;
      expect(Number(row!.n)).to.equal(0);
      expect(await eventCount(accountId)).to.equal(0);
    });
  });
});
