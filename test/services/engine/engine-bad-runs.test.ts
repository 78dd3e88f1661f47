import { expect } from 'chai';
import { execute, insertRows, select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { createMetrics } from '../../../src/metrics/metrics';
import { newRowId } from '../../../src/services/ids';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { bufferLogger } from '../../support/log-buffer';
import { engineAt } from './support';

// One bad run cannot hold its batch (docs/sequences.md "When a run cannot be processed"): a run
// whose stored data this version cannot plan, or whose outcome cannot be written, fails alone;
// a run whose claims keep running out unrecorded is set aside (a dead letter).

const LEASE_MS = 60_000;

// An account's active sequence of `steps` with `count` enrolled contacts: its runs, due now.
async function sequenceWithRuns(steps: unknown[], count: number) {
  const { key, accountId } = await buildTenant();
  const { sequence } = await caller(key).sequences.create({ name: 'Batch', status: 'active', steps } as never);
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(accountId));
  await caller(key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((contact) => contact.id) });
  const runs = async () => (await caller(key).sequences.runs({ id: sequence.id })).runs;
  const run = async (runId: string) => (await caller(key).sequences.run({ id: sequence.id, runId })).run;
  return { key, accountId, sequenceId: sequence.id, runs, run };
}

// Version 2 of the sequence, stored as `steps` is (any text), and its runs moved onto it: what a
// newer service, or a hand in the database, could leave for this version to read.
async function storeVersion(sequence: { accountId: string; sequenceId: string }, steps: string) {
  await withTransaction(testDb(), (transaction) =>
    insertRows(
      testDb(),
      'sequence_versions',
      ['id', 'account_id', 'sequence_id', 'version', 'steps', 'created_at'],
      [[newRowId(), sequence.accountId, sequence.sequenceId, 2, steps, new Date()]],
      transaction,
    ),
  );
  await execute(testDb(), 'UPDATE sequence_runs SET version = 2 WHERE sequence_id = ?', [sequence.sequenceId]);
}

// Makes every statement that matches `pattern` and carries `runId` among its values fail, as a
// statement the database refuses for that run's data would.
function failStatementsOf(runId: string, pattern: RegExp) {
  const { sequelize } = testDb();
  const original = sequelize.query;
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
    const [sql, options] = args as [unknown, { directStatement?: { values: readonly unknown[] } } | undefined];
    const values = (options?.directStatement?.values ?? []).flat();
    if (typeof sql === 'string' && pattern.test(sql) && values.includes(runId)) {
      return Promise.reject(new Error(`the database refused this run's data (${runId.slice(0, 8)})`));
    }
    return original.apply(this, args);
  } as typeof original;
  return () => {
    sequelize.query = original;
  };
}

const statuses = async (runs: () => Promise<Array<{ status: string }>>) => (await runs()).map((run) => run.status);

describe('sequence engine: one bad run cannot hold its batch', () => {
  it('fails a run it cannot plan alone, "cannot plan: …", and carries on with the rest of the batch', async () => {
    const good = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 3);
    const unknownType = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 1);
    await storeVersion(unknownType, JSON.stringify([{ id: 'mark', type: 'sms', text: 'hi' }]));
    const corrupt = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 1);
    await storeVersion(corrupt, '[{"id": "mark", "type": "tag", "add": [');
    const badRules = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 1);
    await execute(testDb(), 'UPDATE sequences SET exit_when = ? WHERE id = ?', ['[{"tag": ', badRules.sequenceId]);
    const badField = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 1);
    await storeVersion(badField, JSON.stringify([{ id: 'pause', type: 'wait', duration: 12 }]));
    await execute(testDb(), "UPDATE sequence_runs SET current_step_id = 'pause' WHERE sequence_id = ?", [badField.sequenceId]);
    const metrics = createMetrics(testDb());
    const logs = bufferLogger('warn');
    const { engine } = engineAt(Date.now() + 1, { metrics: metrics.engine, logger: logs.logger });

    expect(await engine.runOnce()).to.equal(7);
    expect(await statuses(good.runs)).to.deep.equal(['completed', 'completed', 'completed']);
    const reasons = async (sequence: Awaited<ReturnType<typeof sequenceWithRuns>>) => {
      const [run] = await sequence.runs();
      const detail = await sequence.run(run!.id);
      expect(detail.status).to.equal('failed');
      return detail.reason;
    };
    expect(await reasons(unknownType)).to.equal('cannot plan: step "mark" is of type "sms", which this version of the service does not know');
    expect(await reasons(corrupt)).to.match(/^cannot plan: the steps of version 2 cannot be read: /);
    expect(await reasons(badRules)).to.match(/^cannot plan: the sequence's exitWhen or sendingWindow cannot be read: /);
    expect(await reasons(badField)).to.match(/^cannot plan: step "pause"\.duration: /);
    expect(await metrics.registry.metrics()).to.include('sequence_runs_unprocessable_total{stage="plan"} 4');
    const logged = logs.records().filter((record) => record.msg === 'a run could not be planned: it failed alone');
    expect(logged.map((record) => record.reason as string).sort()).to.have.length(4).and.satisfy((reasons: string[]) => reasons.every((reason) => reason.startsWith('cannot plan: ')));
    // Nothing is left claimed, nothing is due.
    const claimed = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_runs WHERE claim_token IS NOT NULL OR due_at IS NOT NULL', []);
    expect(Number(claimed[0]!.n)).to.equal(0);
  });

  it('fails a run whose outcome cannot be written alone, "cannot record: …", and records the rest of its batch', async () => {
    const batch = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 6);
    const [bad] = await batch.runs();
    const restore = failStatementsOf(bad!.id, /^INSERT INTO run_step_executions/);
    try {
      const metrics = createMetrics(testDb());
      const { engine } = engineAt(Date.now() + 1, { metrics: metrics.engine });
      expect(await engine.runOnce()).to.equal(6);
      const runs = await batch.runs();
      expect(runs.filter((run) => run.status === 'completed')).to.have.length(5);
      const detail = await batch.run(bad!.id);
      expect(detail).to.include({ status: 'failed', reason: `cannot record: the database refused this run's data (${bad!.id.slice(0, 8)})` });
      expect(detail.executions).to.deep.equal([]);
      expect(await metrics.registry.metrics()).to.include('sequence_runs_unprocessable_total{stage="record"} 1');
    } finally {
      restore();
    }
  });

  it('sets aside a run whose claims keep running out unrecorded, logs it and counts it; pause and resume make it due again', async () => {
    const batch = await sequenceWithRuns([{ id: 'mark', type: 'tag', add: ['done'] }], 3);
    const [bad] = await batch.runs();
    // Neither its outcome nor its failure can be written.
    const restore = failStatementsOf(bad!.id, /^UPDATE sequence_runs SET status/);
    const logs = bufferLogger('warn');
    const metrics = createMetrics(testDb());
    const { engine, advance } = engineAt(Date.now() + 1, { metrics: metrics.engine, logger: logs.logger, deadLetterAfter: 2 });
    try {
      expect(await engine.runOnce()).to.equal(3);
      expect((await batch.runs()).filter((run) => run.status === 'completed')).to.have.length(2);
      // Its lease runs out, and it is claimed again, in vain.
      advance(LEASE_MS - 10);
      expect(await engine.runOnce(), 'before the lease ends').to.equal(0);
      advance(20);
      expect(await engine.runOnce()).to.equal(1);
      expect((await batch.run(bad!.id)).status).to.equal('pending');
      // Its second lease runs out: two claims in a row came to nothing, the third sets it aside.
      advance(LEASE_MS + 10);
      expect(await engine.runOnce()).to.equal(1);
      const [row] = await select<{ due_at: unknown; claim_token: string | null; dead_lettered_at: unknown; expired_claims: number | string }>(
        testDb(),
        'SELECT due_at, claim_token, dead_lettered_at, expired_claims FROM sequence_runs WHERE id = ?',
        [bad!.id],
      );
      expect(row).to.include({ due_at: null, claim_token: null });
      expect(row!.dead_lettered_at).to.not.equal(null);
      expect(Number(row!.expired_claims)).to.equal(2);
      expect((await batch.run(bad!.id)).reason).to.match(/^dead-lettered: /);
      advance(10 * LEASE_MS);
      expect(await engine.runOnce(), 'set aside: never claimed again').to.equal(0);
      const lines = logs.records().filter((record) => record.runId === bad!.id);
      expect(lines.map((line) => line.msg)).to.include('run dead-lettered: its claims kept running out before its outcome was recorded; set aside until paused and resumed');
      expect(await metrics.registry.metrics()).to.include('sequence_runs_dead_lettered_total 1');
    } finally {
      restore();
    }
    // Once the cause is gone, pause and resume give it back to the engine.
    await caller(batch.key).sequences.pauseRun({ id: batch.sequenceId, runId: bad!.id });
    await caller(batch.key).sequences.resumeRun({ id: batch.sequenceId, runId: bad!.id });
    advance(LEASE_MS);
    await engine.runUntilIdle();
    expect(await batch.run(bad!.id)).to.include({ status: 'completed', reason: null });
    const [after] = await select<{ dead_lettered_at: unknown }>(testDb(), 'SELECT dead_lettered_at FROM sequence_runs WHERE id = ?', [bad!.id]);
    expect(after!.dead_lettered_at).to.equal(null);
  });
});
