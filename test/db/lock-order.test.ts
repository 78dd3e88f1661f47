import { expect } from 'chai';
import { batchUpsertContacts, updateContact } from '../../src/services/contacts/contact-operations';
import { getContactByEmail } from '../../src/services/contacts/find-contact';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { moveRun } from '../../src/services/sequences/run-transitions';
import { unenroll } from '../../src/services/sequences/unenroll';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { countLockFailures } from '../support/lock-failures';
import { storedRuns } from '../support/sequence-rows';
import { holdAfter } from '../support/statement-gate';

// Two writers of one contact, lined up in the order that used to deadlock on MySQL (issue 7):
// the first is held open right after taking its locks, the second starts and runs into them,
// then the first goes on. Both must finish without a deadlock: the second waits, because
// both take their locks in the one order of docs/idempotency.md "Concurrency and retries".

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('lock order between writers of one contact (MySQL)', () => {
  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite runs one transaction at a time)';
      this.skip();
    }
  });

  it('lets a batch upsert wait for an email change of a contact it names, without a deadlock', async () => {
    const { accountId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'middle@example.com', firstName: 'Before' });
    const gate = holdAfter(/FOR UPDATE/);
    try {
      const locks = await countLockFailures(async () => {
        const rename = updateContact(testDb(), { accountId, id: contact.id, email: 'renamed@example.com' });
        await gate.held;
        const batchSent = gate.sent(/^INSERT INTO contacts/);
        const batch = batchUpsertContacts(testDb(), {
          accountId,
          contacts: ['after@example.com', 'middle@example.com', 'before@example.com'].map((email) => ({ email, firstName: 'Batch' })),
        });
        await batchSent;
        // Long enough for the batch's INSERT to reach the contact's index entry.
        await settle(300);
        gate.release();
        return Promise.all([rename, batch]);
      });

      expect(locks.deadlocks, 'deadlocks').to.equal(0);
      const [renamed, summary] = locks.result;
      expect(renamed).to.include({ id: contact.id, email: 'renamed@example.com', firstName: 'Before' });
      // The rename committed first, so the batch found the old address free and created it.
      expect(summary).to.deep.equal({ total: 3, inserted: 3, updated: 0 });
      const created = await getContactByEmail(testDb(), { accountId, email: 'middle@example.com' });
      expect(created.id).to.not.equal(contact.id);
    } finally {
      gate.restore();
    }
  });

  it('lets an unenroll wait for the runner moving a run of the contact, without a deadlock', async () => {
    const { accountId } = await buildTenant();
    const sequenceId = (await buildSequence(accountId)).id;
    const contact = await buildContact(accountId);
    await enrollByIds(testDb(), { accountId, sequenceId, contactIds: [contact.id] });
    const [run] = await storedRuns({ accountId });
    const gate = holdAfter(/FROM sequence_runs WHERE id = \?.*FOR UPDATE/s);
    try {
      const locks = await countLockFailures(async () => {
        const move = moveRun(testDb(), { accountId, runId: run.id, status: 'failed' });
        await gate.held;
        const unenrollSent = gate.sent(/FROM contacts/);
        const cancel = unenroll(testDb(), { accountId, sequenceId, contactIds: [contact.id] });
        await unenrollSent;
        // Long enough for the unenroll to lock the contact, if it can, and reach the run.
        await settle(300);
        gate.release();
        return Promise.all([move, cancel]);
      });

      expect(locks.deadlocks, 'deadlocks').to.equal(0);
      const [moved, cancelled] = locks.result;
      expect(moved.status).to.equal('failed');
      // The move committed first: nothing was left for the unenroll to cancel.
      expect(cancelled).to.deep.equal({ cancelled: 0, contactIds: [] });
      expect((await storedRuns({ accountId })).map((r) => r.status)).to.deep.equal(['failed']);
    } finally {
      gate.restore();
    }
  });
});
