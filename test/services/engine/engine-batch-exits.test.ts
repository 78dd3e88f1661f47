import { expect } from 'chai';
import { getContact } from '../../../src/services/contacts/find-contact';
import { listEvents } from '../../../src/services/events/list-events';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { engineAt } from './support';

// Exit rules hold inside a batch (docs/sequences.md "Exit rules"): a run whose exit rule is met
// by any write of its own batch is cancelled in that transaction, and its own action is not
// applied.

async function buyAndPitch(order: 'buy first' | 'pitch first') {
  const { key, accountId } = await buildTenant();
  const buy = async () => (await caller(key).sequences.create({ name: 'Buy', status: 'active', steps: [{ id: 'buy', type: 'tag', add: ['purchased'] }] })).sequence;
  const pitch = async () =>
    (
      await caller(key).sequences.create({
        name: 'Pitch',
        status: 'active',
        steps: [{ id: 'pitch', type: 'tag', add: ['pitched'] }, { id: 'follow-up', type: 'wait', duration: 'P1D' }],
        exitWhen: [{ tag: 'purchased' }],
      })
    ).sequence;
  const contact = await buildContact(accountId);
  // Enrolled in this order, the runs are due, and taken in the batch, in this order.
  const [first, second] = order === 'buy first' ? [await buy(), await pitch()] : [await pitch(), await buy()];
  await caller(key).sequences.enroll({ id: first.id, contactIds: [contact.id] });
  await caller(key).sequences.enroll({ id: second.id, contactIds: [contact.id] });
  const [buying, pitching] = order === 'buy first' ? [first, second] : [second, first];
  const { engine } = engineAt();
  expect(await engine.runOnce(), 'both runs in one pass').to.equal(2);

  const [pitchRun] = (await caller(key).sequences.runs({ id: pitching.id })).runs;
  const detail = (await caller(key).sequences.run({ id: pitching.id, runId: pitchRun!.id })).run;
  expect(detail).to.include({ status: 'cancelled', reason: 'exitWhen: the contact got the tag "purchased"' });
  expect(detail.executions, 'its own step not taken').to.deep.equal([]);
  const [buyRun] = (await caller(key).sequences.runs({ id: buying.id })).runs;
  expect(buyRun!.status).to.equal('completed');
  expect((await getContact(testDb(), { accountId, id: contact.id })).tags).to.deep.equal(['purchased']);
  const events = (await listEvents(testDb(), { accountId, limit: 100 })).events;
  const cancelled = events.filter((event) => event.type === 'run.status_changed' && (event.data as { run: { id: string } }).run.id === pitchRun!.id);
  expect(cancelled.map((event) => (event.data as { to: string }).to)).to.deep.equal(['cancelled']);
  const updates = events.filter((event) => event.type === 'contact.updated');
  expect(updates.map((event) => (event.data as { contact: { tags: string[] } }).contact.tags)).to.deep.equal([['purchased']]);
}

describe('sequence engine: exit rules inside a batch', () => {
  it('run A tags "purchased", run B (exits on "purchased") tags "pitched" in the same pass: B is cancelled, "pitched" never applied', async () => {
    await buyAndPitch('buy first');
  });

  it('the same when B comes first in the batch', async () => {
    await buyAndPitch('pitch first');
  });
});
