import { expect } from 'chai';
import { transactionCounts } from '../../../src/db/sql/transaction';
import { addTags, updateContact } from '../../../src/services/contacts/contact-operations';
import { pauseRun, resumeRun } from '../../../src/services/sequences/run-transitions';
import { unenroll } from '../../../src/services/sequences/unenroll';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { countLockFailures } from '../../support/lock-failures';
import { holdAfter } from '../../support/statement-gate';
import { SequenceEngine } from '../../../src/services/engine/engine';
import { engineAt } from './support';

// One lock order, for real (docs/architecture.md "One lock order"): on MariaDB, a run that
// leaves the active statuses rewrites its entry in sequence_runs_one_active, the index that
// carries its contact's foreign key, so InnoDB share-locks the contact. The engine's record
// therefore takes the contacts of the runs it ends first, then the runs, as every other writer
// of runs does: a pause or an unenroll (contact, then run) waits for it instead of deadlocking.

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sequence engine: one lock order (MySQL)', function () {
  this.timeout(120_000);

  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite runs one transaction at a time)';
      this.skip();
    }
  });

  it('a pause that locks the contact while the engine holds the run it completes waits, without a deadlock', async () => {
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({ name: 'One step', status: 'active', steps: [{ id: 'done', type: 'exit' }] });
    const contact = await buildContact(accountId);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
    const { engine } = engineAt();
    // The engine's record, held right after it has locked the runs it claimed.
    const gate = holdAfter(/FROM sequence_runs WHERE id IN \(.*\) AND claim_token = \? FOR UPDATE$/s);
    try {
      const locks = await countLockFailures(async () => {
        const pass = engine.runOnce();
        await gate.held;
        const pauseSent = gate.sent(/FROM contacts/);
        const pause = pauseRun(testDb(), { accountId, sequenceId: sequence.id, runId: run!.id }).then(
          (paused) => paused.status,
          (error: Error) => error.message,
        );
        await pauseSent;
        // Long enough for the pause to lock the contact, if it can, and reach the run.
        await settle(300);
        gate.release();
        return Promise.all([pass, pause]);
      });
      expect(locks.deadlocks, 'deadlocks').to.equal(0);
      const [claimed, paused] = locks.result;
      expect(claimed).to.equal(1);
      // The engine went first: the run was complete when the pause reached it.
      expect(paused).to.equal('A completed run cannot be paused');
    } finally {
      gate.restore();
    }
  });

  it('the engine running beside pauses, resumes, unenrolls and contact writes: no deadlock', async () => {
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({
      name: 'Busy',
      status: 'active',
      steps: [
        { id: 'mark', type: 'tag', add: ['seen'] },
        { id: 'done', type: 'exit' },
      ],
      exitWhen: [{ tag: 'stop' }],
    });
    const contacts: Array<{ id: string }> = [];
    for (let i = 0; i < 120; i += 1) contacts.push(await buildContact(accountId));
    const deadlocksBefore = transactionCounts(testDb()).deadlocks;
    const engines = [0, 1].map(() => new SequenceEngine(testDb(), { logger: silentLogger, batchSize: 10, webhook: { timeoutMs: 2_000, allowInsecure: true } }));
    const activeRuns = async () =>
      (await caller(key).sequences.runs({ id: sequence.id, limit: 100 })).runs.filter((run) => run.status === 'pending' || run.status === 'running');

    const locks = await countLockFailures(async () => {
      let running = true;
      const loops = engines.map(async (engine) => {
        while (running) if ((await engine.runOnce()) === 0) await settle(2);
      });
      const errors: string[] = [];
      const note = (error: Error) => void errors.push(error.message);
      const expected = (error: Error) => (/cannot be (paused|resumed)/.test(error.message) ? undefined : note(error));
      for (let round = 0; round < 12; round += 1) {
        const group = contacts.slice(round * 10, round * 10 + 10);
        await caller(key).sequences.enroll({ id: sequence.id, contactIds: group.map((contact) => contact.id) });
        // Pauses and resumes land on runs the engines are recording at that moment.
        for (let wave = 0; wave < 3; wave += 1) {
          const runs = await activeRuns();
          await Promise.all([
            ...runs.map((run) =>
              pauseRun(testDb(), { accountId, sequenceId: sequence.id, runId: run.id })
                .then(() => resumeRun(testDb(), { accountId, sequenceId: sequence.id, runId: run.id }))
                .catch(expected),
            ),
            wave === 0 ? unenroll(testDb(), { accountId, sequenceId: sequence.id, contactIds: group.slice(0, 2).map((contact) => contact.id) }).catch(note) : undefined,
            ...group.slice(2 + wave * 2, 4 + wave * 2).map((contact) => addTags(testDb(), { accountId, id: contact.id, tags: wave === 0 ? ['stop'] : ['other'] }).catch(note)),
            ...group.slice(8, 10).map((contact) => updateContact(testDb(), { accountId, id: contact.id, firstName: `Round ${round}.${wave}` }).catch(note)),
          ]);
        }
      }
      running = false;
      await Promise.all(loops);
      await engines[0]!.runUntilIdle();
      return errors;
    });

    expect(locks.result, 'failed writes').to.deep.equal([]);
    expect(locks.deadlocks, 'deadlocks seen by statements').to.equal(0);
    // What GET /metrics reports as db_deadlocks_total (src/metrics/metrics.ts).
    expect(transactionCounts(testDb()).deadlocks - deadlocksBefore, 'db_deadlocks_total').to.equal(0);
    expect(await activeRuns(), 'every run moved on').to.deep.equal([]);
  });
});
