import { expect } from 'chai';
import { UniqueConstraintError } from 'sequelize';
import { insertRows, select } from '../../../src/db/sql/statements';
import { getContact } from '../../../src/services/contacts/find-contact';
import { newRowId } from '../../../src/services/ids';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { countLockFailures } from '../../support/lock-failures';
import { holdAfter } from '../../support/statement-gate';
import { engineAt, enrolledRun, heldReceiver } from './support';

// What the API acknowledged holds (issue 27, item 12): a move and the engine's record of the
// same run serialize on the run's row, a pause and a dispatcher's claim on the send's row, and
// a visit of a step succeeds once whatever happens (a unique key).

// A statement of this database's connections that has been waiting over 200 ms (blocked on a
// lock) whose text matches (MySQL; the processlist shows one's own connections).
async function blockedIn(pattern: string): Promise<void> {
  for (let i = 0; i < 5_000; i += 1) {
    const [row] = await select<{ n: number | string }>(
      testDb(),
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND TIME_MS > 200 AND INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'",
      [pattern],
    );
    if (Number(row!.n) > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect.fail(`nothing blocked in ${pattern}`);
}

describe('sequence engine: writers of one run, one after the other', () => {
  it('a move while the engine records the run: it waits, sees the step the run went to, and moves it from there', async function () {
    if (testDb().dialect === 'sqlite') this.skip();
    const run = await enrolledRun([
      { id: 'w1', type: 'wait', duration: 'PT1M' },
      { id: 'w2', type: 'wait', duration: 'PT1M' },
      { id: 't', type: 'tag', add: ['v1'] },
    ]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    advance(61_000);
    // The engine's record of w1's end holds the run (its lock), before it writes anything.
    const gate = holdAfter(/AND claim_token = \? FOR UPDATE/);
    let moving: Promise<unknown> | undefined;
    let deadlocks = -1;
    try {
      const pass = engine.runOnce();
      await gate.held;
      const counted = countLockFailures(async () => {
        moving = caller(run.key).sequences.update({
        id: run.sequence.id,
        steps: [
          { id: 'w1x', type: 'wait', duration: 'PT1M' },
          { id: 'w2x', type: 'wait', duration: 'PT2M' },
          { id: 'tx', type: 'tag', add: ['v2'] },
        ],
        moveRuns: { stepMap: { w1: 'w1x', w2: 'w2x' } },
        });
        await blockedIn('SELECT id, version, current_step_id, status, visit FROM sequence_runs%');
        gate.release();
        await pass;
        await moving;
      });
      deadlocks = (await counted).deadlocks;
    } finally {
      gate.restore();
    }
    expect(deadlocks, 'deadlocks').to.equal(0);
    // The record went first (w1 done, the run at w2); the move found it at w2.
    const moved = await run.timeline();
    expect(moved).to.include({ version: 2, currentStepId: 'w2x', status: 'running' });
    advance(1_000);
    await engine.runUntilIdle();
    advance(121_000);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    // (w1's end began w2 in the same record, a chain: the move to a changed wait skipped w2's
    // wait under way; a move to the same wait would keep it, engine-rules.test.ts.)
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['w1', 'succeeded'],
      ['w2', 'skipped'],
      ['w2x', 'succeeded'],
      ['tx', 'succeeded'],
    ]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['v2']);
  });

  it('a move that holds the run while the engine records it: the record writes nothing, and the run starts the new step', async function () {
    if (testDb().dialect === 'sqlite') this.skip();
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT1M' }, { id: 'old', type: 'tag', add: ['old'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    advance(61_000);
    // The move holds the runs it locked, before it writes.
    const gate = holdAfter(/^SELECT id, version, current_step_id, status, visit FROM sequence_runs/);
    let pass: Promise<number> | undefined;
    try {
      const moving = caller(run.key).sequences.update({
        id: run.sequence.id,
        // A changed wait (the same one would keep its end and its execution).
        steps: [{ id: 'w2', type: 'wait', duration: 'PT2M' }, { id: 'new', type: 'tag', add: ['new'] }],
        moveRuns: { stepMap: { w: 'w2' } },
      });
      await gate.held;
      pass = engine.runOnce();
      // The engine's claim passes over the locked run (SKIP LOCKED): it has nothing to record.
      expect(await pass).to.equal(0);
      gate.release();
      await moving;
    } finally {
      gate.restore();
    }
    expect(await run.timeline()).to.include({ version: 2, currentStepId: 'w2' });
    await engine.runUntilIdle();
    advance(121_000);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['w', 'skipped'],
      ['w2', 'succeeded'],
      ['new', 'succeeded'],
    ]);
  });

  it("a pause that holds a run's queued send: a dispatcher's claim passes over it, and once the pause is answered the send stays held", async function () {
    if (testDb().dialect === 'sqlite') this.skip();
    const receiver = await heldReceiver((index) => (index === 0 ? 503 : 204));
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Hook', status: 'active', steps: [{ id: 'hook', type: 'webhook', endpointId: webhook.id }] });
      const contact = await buildContact(tenant.accountId);
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
      const { engine, advance } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true } });
      await engine.runOnce();
      // The retry is due.
      advance(60_000);
      const gate = holdAfter(/^UPDATE outbox SET status = 'held'/);
      try {
        const pausing = caller(tenant.key).sequences.pauseRun({ id: sequence.id, runId: run!.id });
        await gate.held;
        expect(await engine.runOnce()).to.equal(0);
        gate.release();
        await pausing;
      } finally {
        gate.restore();
      }
      expect(await engine.runOnce()).to.equal(0);
      expect(receiver.received).to.have.length(1);
      const [send] = await select<{ status: string }>(testDb(), 'SELECT status FROM outbox WHERE run_id = ?', [run!.id]);
      expect(send!.status).to.equal('held');
    } finally {
      await receiver.close();
    }
  });

  it('a visit of a step succeeds once: the database refuses a second succeeded execution of it', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }, { id: 'end', type: 'exit' }]);
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const [first] = await select<{ visit: number | string }>(testDb(), "SELECT visit FROM run_step_executions WHERE run_id = ? AND step_id = 'mark'", [run.runId]);
    const again = [newRowId(), run.accountId, run.runId, Number(first!.visit), 2, 'mark', 'tag', 'succeeded', null, null, new Date(), new Date()];
    const columns = ['id', 'account_id', 'run_id', 'visit', 'attempt', 'step_id', 'type', 'status', 'reason', 'detail', 'started_at', 'finished_at'];
    let refused: unknown;
    try {
      await testDb().sequelize.transaction((transaction) => insertRows(testDb(), 'run_step_executions', columns, [again], transaction));
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(UniqueConstraintError);
    // A failed attempt of the same visit is another matter: it is written.
    await testDb().sequelize.transaction((transaction) =>
      insertRows(testDb(), 'run_step_executions', columns, [[newRowId(), ...again.slice(1, 4), 3, 'mark', 'tag', 'failed', 'x', null, new Date(), new Date()]], transaction),
    );
  });
});
