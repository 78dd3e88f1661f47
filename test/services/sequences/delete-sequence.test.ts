import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { select } from '../../../src/db/sql/statements';
import { AppError } from '../../../src/errors/app-errors';
import { enrollByIds } from '../../../src/services/sequences/enroll-by-ids';
import { enrollContact } from '../../../src/services/sequences/enroll-contact';
import { deleteSequence, SEQUENCE_HAS_RUNS } from '../../../src/services/sequences/delete-sequence';
import { moveRun } from '../../../src/services/sequences/run-transitions';
import { createSequence, updateSequence } from '../../../src/services/sequences/sequence-admin';
import { deleteContact } from '../../../src/services/contacts/contact-operations';
import { testDb } from '../../support/db';
import { buildContact, buildSequence, buildTenant } from '../../support/factories';
import { countLockFailures } from '../../support/lock-failures';
import { storedRuns } from '../../support/sequence-rows';
import { holdAfter } from '../../support/statement-gate';

// Deleting a sequence (docs/decisions.md "Deleting and archiving sequences"): one with no run
// on record goes, with its versions and enrollment records; one with runs stays (409). Against
// the database, and raced against enrolling, which must never leave a run of a deleted
// sequence nor fail with anything but the 404 an unknown sequence gets.

const STEPS = [{ id: 'pause', type: 'wait' as const, duration: 'P1D' }];

async function rowsOf(sequenceId: string) {
  const count = async (sql: string) => Number((await select<{ n: number | string }>(testDb(), sql, [sequenceId]))[0]!.n);
  return {
    sequences: await count('SELECT COUNT(*) AS n FROM sequences WHERE id = ?'),
    versions: await count('SELECT COUNT(*) AS n FROM sequence_versions WHERE sequence_id = ?'),
    enrollments: await count('SELECT COUNT(*) AS n FROM enrollments WHERE sequence_id = ?'),
    runs: await count('SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ?'),
  };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(AppError);
    return error as AppError;
  }
  return expect.fail('expected a rejection');
}

// The delete's read of the sequence (which locks it), and an enroll's (which shares it).
const DELETE_READS_SEQUENCE = /^SELECT id, account_id FROM sequences WHERE id = \?/;
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deleteSequence', () => {
  it('deletes a sequence that never had a run, with its versions and its enrollment records', async () => {
    const { accountId } = await buildTenant();
    const sequence = await createSequence(testDb(), { accountId, name: 'Trying things', status: 'active', steps: STEPS });
    await updateSequence(testDb(), { accountId, id: sequence.id, steps: [{ ...STEPS[0]!, duration: 'P2D' }] });
    // An enroll by ids of no contact of the account stores its record and starts no run.
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [randomUUID()] });
    expect(await rowsOf(sequence.id)).to.deep.equal({ sequences: 1, versions: 2, enrollments: 1, runs: 0 });
    const other = await buildSequence(accountId, 'draft');

    expect(await deleteSequence(testDb(), { accountId, id: sequence.id.toUpperCase() })).to.deep.equal({ id: sequence.id, accountId });

    expect(await rowsOf(sequence.id)).to.deep.equal({ sequences: 0, versions: 0, enrollments: 0, runs: 0 });
    expect((await rowsOf(other.id)).sequences, 'another sequence stays').to.equal(1);
  });

  it('deletes a draft, a paused and an archived sequence alike; without an account (the CLI) any account\'s', async () => {
    const { accountId } = await buildTenant();
    for (const status of ['draft', 'paused', 'archived'] as const) {
      const sequence = await buildSequence(accountId, status);
      await deleteSequence(testDb(), { id: sequence.id });
      expect((await rowsOf(sequence.id)).sequences, status).to.equal(0);
    }
  });

  it('refuses a sequence with a run in any status with 409 sequence_has_runs, and keeps everything', async () => {
    const { accountId } = await buildTenant();
    const statuses = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
    for (const status of statuses) {
      const sequence = await buildSequence(accountId, 'active');
      const contact = await buildContact(accountId);
      const outcome = await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: contact.email } });
      if (!outcome.enrolled) expect.fail('not enrolled');
      const path: Record<string, Array<'running' | 'paused' | 'completed' | 'failed' | 'cancelled'>> = {
        pending: [],
        running: ['running'],
        paused: ['running', 'paused'],
        completed: ['running', 'completed'],
        failed: ['failed'],
        cancelled: ['cancelled'],
      };
      for (const next of path[status]!) await moveRun(testDb(), { accountId, runId: outcome.runId, status: next });
      // Archived or not, a sequence with runs stays.
      if (status === 'completed') await updateSequence(testDb(), { accountId, id: sequence.id, status: 'archived' });
      const before = await rowsOf(sequence.id);

      const error = await rejection(deleteSequence(testDb(), { accountId, id: sequence.id }));
      expect([error.status, error.code, error.message], status).to.deep.equal([409, 'sequence_has_runs', SEQUENCE_HAS_RUNS]);
      expect(await rowsOf(sequence.id), status).to.deep.equal(before);
      expect((await storedRuns({ sequenceId: sequence.id })).map((run) => run.status), status).to.deep.equal([status]);
    }
  });

  it('deletes a sequence whose only runs went with their contact: none is left on record', async () => {
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const contact = await buildContact(accountId);
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contact.id] });
    await deleteContact(testDb(), { accountId, id: contact.id });
    await deleteSequence(testDb(), { accountId, id: sequence.id });
    expect((await rowsOf(sequence.id)).sequences).to.equal(0);
  });

  it('answers 404 Sequence not found for an unknown, malformed or other account\'s id, deleting nothing', async () => {
    const { accountId } = await buildTenant();
    const other = await buildTenant();
    const theirs = await buildSequence(other.accountId, 'draft');
    for (const id of [randomUUID(), 'not-a-uuid', theirs.id]) {
      const error = await rejection(deleteSequence(testDb(), { accountId, id }));
      expect([error.status, error.code, error.message], id).to.deep.equal([404, 'not_found', 'Sequence not found']);
    }
    expect((await rowsOf(theirs.id)).sequences).to.equal(1);
  });

  it('lets triggers racing a delete either enroll (the delete is then a 409) or find no sequence, never leaving a run behind', async function () {
    this.timeout(60_000);
    const { accountId } = await buildTenant();
    const outcomes = { deleted: 0, refused: 0 };
    for (let round = 0; round < 8; round += 1) {
      const sequence = await buildSequence(accountId, 'active');
      const email = (i: number) => `race-${round}-${i}@example.com`;
      const trigger = (i: number) =>
        enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: email(i) } }).then(
          (outcome) => ({ enrolled: outcome.enrolled, error: null as unknown }),
          (error: unknown) => ({ enrolled: false, error }),
        );
      const remove = () =>
        deleteSequence(testDb(), { accountId, id: sequence.id }).then(
          () => null,
          (error: unknown) => error,
        );
      // Even rounds: the delete sets off first, the triggers right behind it. Odd rounds: the
      // triggers first, the delete a moment later, among them.
      let deleted: unknown;
      let results: Array<{ enrolled: boolean; error: unknown }>;
      if (round % 2 === 0) {
        const deleting = remove();
        results = await Promise.all(Array.from({ length: 6 }, (_, i) => trigger(i)));
        deleted = await deleting;
      } else {
        const triggers = Array.from({ length: 6 }, (_, i) => trigger(i));
        deleted = await settle(round).then(remove);
        results = await Promise.all(triggers);
      }
      const unexpected = results.filter((r) => r.error && !(r.error instanceof AppError && r.error.status === 404)).map((r) => String(r.error));
      expect(unexpected, `round ${round}: only 404s`).to.deep.equal([]);
      const enrolled = results.filter((r) => r.enrolled).length;
      const runs = await storedRuns({ sequenceId: sequence.id });
      if (deleted === null) {
        outcomes.deleted += 1;
        expect(enrolled, `round ${round}: deleted, so nothing enrolled`).to.equal(0);
        expect(runs).to.deep.equal([]);
        expect((await rowsOf(sequence.id)).sequences).to.equal(0);
      } else {
        outcomes.refused += 1;
        expect(deleted).to.be.instanceOf(AppError);
        expect((deleted as AppError).code, `round ${round}`).to.equal('sequence_has_runs');
        expect(enrolled, `round ${round}: refused, so something enrolled`).to.be.at.least(1);
        expect(runs).to.have.length(enrolled);
        // The sequence stayed: every trigger, before the delete or after it, enrolled.
        expect(results.every((r) => r.enrolled)).to.equal(true);
      }
    }
    // Both outcomes happened, or the race was not raced.
    expect(outcomes.deleted, 'rounds the delete won').to.be.at.least(1);
    expect(outcomes.refused, 'rounds a trigger won').to.be.at.least(1);
  });
});

describe('deleteSequence against an enroll in flight (MySQL)', () => {
  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite runs one transaction at a time)';
      this.skip();
    }
  });

  it('makes a trigger that arrives while it holds the sequence wait, then answer 404 and write nothing', async () => {
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const gate = holdAfter(DELETE_READS_SEQUENCE);
    try {
      const locks = await countLockFailures(async () => {
        const deleting = deleteSequence(testDb(), { accountId, id: sequence.id });
        await gate.held;
        const triggerSent = gate.sent(/FROM sequences WHERE id = \? AND account_id = \?.*(SHARE)/);
        const trigger = enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'late@example.com' } }).then(
          () => null,
          (error: unknown) => error,
        );
        await triggerSent;
        // Long enough for the trigger to reach the sequence's lock and wait on it.
        await settle(300);
        gate.release();
        return Promise.all([deleting, trigger]);
      });
      expect(locks.deadlocks).to.equal(0);
      const [, error] = locks.result;
      expect(error).to.be.instanceOf(AppError);
      expect([(error as AppError).status, (error as AppError).message]).to.deep.equal([404, 'Sequence not found']);
      expect(await rowsOf(sequence.id)).to.deep.equal({ sequences: 0, versions: 0, enrollments: 0, runs: 0 });
      expect(await select(testDb(), 'SELECT id FROM contacts WHERE account_id = ?', [accountId]), 'the upsert never ran').to.deep.equal([]);
    } finally {
      gate.restore();
    }
  });

  it('makes a delete that arrives while a trigger holds the sequence wait for its run, then answer 409', async () => {
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const gate = holdAfter(/FROM sequences WHERE id = \? AND account_id = \?.*SHARE/);
    try {
      const locks = await countLockFailures(async () => {
        const trigger = enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'first@example.com' } });
        await gate.held;
        const deleteSent = gate.sent(DELETE_READS_SEQUENCE);
        const deleting = deleteSequence(testDb(), { accountId, id: sequence.id }).then(
          () => null,
          (error: unknown) => error,
        );
        await deleteSent;
        await settle(300);
        gate.release();
        return Promise.all([trigger, deleting]);
      });
      expect(locks.deadlocks).to.equal(0);
      const [outcome, error] = locks.result;
      expect(outcome.enrolled).to.equal(true);
      expect((error as AppError).code).to.equal('sequence_has_runs');
      expect((await storedRuns({ sequenceId: sequence.id })).map((run) => run.status)).to.deep.equal(['pending']);
      expect((await rowsOf(sequence.id)).sequences).to.equal(1);
    } finally {
      gate.restore();
    }
  });
});
