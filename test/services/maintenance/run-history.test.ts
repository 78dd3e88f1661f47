import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { execute, select } from '../../../src/db/sql/statements';
import { runHistoryTask, DEFAULT_RUN_HISTORY } from '../../../src/services/maintenance/run-history-task';
import { pruneRunHistory } from '../../../src/services/sequences/prune-run-history';
import { caller, silentLogger } from '../../support/app';
import { captureQueries, testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';
import { startReceiver } from '../../support/webhook-receiver';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { engineAt } from '../engine/support';

// RUN_HISTORY_DAYS: the executions of runs that ended longer ago go, in bounded chunks; the run
// rows stay with their final status and reason; runs still active keep everything.

const DAY = 24 * 60 * 60 * 1000;

// A sequence of two steps, `count` contacts enrolled and run to completion by the engine: two
// executions per run.
async function finishedRuns(count: number) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({
    name: 'History',
    status: 'active',
    steps: [{ id: 'mark', type: 'tag', add: ['x'] }, { id: 'more', type: 'tag', add: ['y'] }],
  });
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(tenant.accountId));
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
  const { engine } = engineAt();
  await engine.runUntilIdle();
  const runs = (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs;
  return { ...tenant, sequence, runIds: runs.map((run) => run.id).sort() };
}

async function endedAt(runId: string, at: Date) {
  await execute(testDb(), 'UPDATE sequence_runs SET completed_at = ? WHERE id = ?', [at, runId]);
}

async function executionsOf(runIds: string[]): Promise<Map<string, number>> {
  const rows = await select<{ run_id: string; n: number | string }>(
    testDb(),
    'SELECT run_id, COUNT(*) AS n FROM run_step_executions WHERE run_id IN (?) GROUP BY run_id',
    [runIds],
  );
  return new Map(runIds.map((id) => [id, Number(rows.find((row) => row.run_id === id)?.n ?? 0)]));
}

async function sendsOf(runIds: string[]): Promise<Map<string, number>> {
  const rows = await select<{ run_id: string; n: number | string }>(testDb(), 'SELECT run_id, COUNT(*) AS n FROM outbox WHERE run_id IN (?) GROUP BY run_id', [runIds]);
  return new Map(runIds.map((id) => [id, Number(rows.find((row) => row.run_id === id)?.n ?? 0)]));
}

describe('run history prune', () => {
  it('deletes the executions of runs ended more than RUN_HISTORY_DAYS ago, keeps the runs, their status and reason, and everything newer', async () => {
    const { key, sequence, runIds } = await finishedRuns(5);
    const now = new Date(Date.now() + 60_000);
    // Ended 120, 91, 90 (less a minute), 30 days ago; the fifth just now.
    await endedAt(runIds[0]!, new Date(now.getTime() - 120 * DAY));
    await endedAt(runIds[1]!, new Date(now.getTime() - 91 * DAY));
    await endedAt(runIds[2]!, new Date(now.getTime() - 90 * DAY + 60_000));
    await endedAt(runIds[3]!, new Date(now.getTime() - 30 * DAY));
    await execute(testDb(), "UPDATE sequence_runs SET status = 'failed', current_step_id = 'more', reason = 'step \"more\": boom' WHERE id = ?", [runIds[1]!]);
    expect([...(await executionsOf(runIds)).values()]).to.deep.equal([2, 2, 2, 2, 2]);

    const clock = manualTimers(now.getTime());
    const task = runHistoryTask(testDb(), { ...DEFAULT_RUN_HISTORY, historyDays: 90 }, { logger: silentLogger, timers: clock.timers });
    expect(await task.runOnce()).to.equal(false);

    expect([...(await executionsOf(runIds)).values()]).to.deep.equal([0, 0, 2, 2, 2]);
    const old = (await caller(key).sequences.run({ id: sequence.id, runId: runIds[1]! })).run;
    expect(old).to.deep.include({ status: 'failed', reason: 'step "more": boom', currentStepId: 'more', executions: [] });
    expect((await caller(key).sequences.run({ id: sequence.id, runId: runIds[0]! })).run.status).to.equal('completed');

    // A day later by the task's clock, the run ended 90 days less a minute ago has passed the line.
    clock.advance(DAY);
    await task.runOnce();
    expect([...(await executionsOf(runIds)).values()]).to.deep.equal([0, 0, 0, 2, 2]);
  });

  it('keeps the executions of active runs, however old they are', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Long wait',
      status: 'active',
      steps: [{ id: 'w', type: 'wait', duration: 'P1D' }, { id: 'mark', type: 'tag', add: ['x'] }],
    });
    const contact = await buildContact(tenant.accountId);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const { engine } = engineAt();
    await engine.runOnce();
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    await execute(testDb(), 'UPDATE run_step_executions SET started_at = ? WHERE run_id = ?', [new Date(Date.now() - 400 * DAY), run!.id]);
    const pruned = await pruneRunHistory(testDb(), { before: new Date(Date.now() + 1_000), runsPerChunk: 10, rowsPerChunk: 10, maxChunks: 10 });
    expect(pruned).to.deep.equal({ runs: 0, executions: 0, sends: 0, more: false });
    expect(await executionsOf([run!.id])).to.deep.equal(new Map([[run!.id, 1]]));
  });

  it('works in bounded chunks: at most runsPerChunk runs and rowsPerChunk executions per statement, maxChunks per pass, resuming where it stopped', async () => {
    const { runIds } = await finishedRuns(3);
    const before = new Date(Date.now() + 10 * 60_000);
    const options = { before, runsPerChunk: 2, rowsPerChunk: 3, maxChunks: 1 };
    // Chunk 1: runs 1-2, 4 executions, cut at 3: the same runs again next time.
    const first = await captureQueries(() => pruneRunHistory(testDb(), options));
    expect(first.result).to.deep.equal({ runs: 0, executions: 3, sends: 0, more: true });
    expect(first.queries.filter((sql) => /^(Executing \([^)]*\): )?DELETE FROM run_step_executions/.test(sql))).to.have.length(1);
    expect(await pruneRunHistory(testDb(), options)).to.deep.equal({ runs: 2, executions: 1, sends: 0, more: true });
    expect([...(await executionsOf(runIds)).values()]).to.deep.equal([0, 0, 2]);
    expect(await pruneRunHistory(testDb(), { ...options, maxChunks: 5 })).to.deep.equal({ runs: 1, executions: 2, sends: 0, more: false });
    expect([...(await executionsOf(runIds)).values()]).to.deep.equal([0, 0, 0]);
    // Nothing to walk again: the cursor is past them.
    const again = await captureQueries(() => pruneRunHistory(testDb(), { ...options, maxChunks: 5 }));
    expect(again.result).to.deep.equal({ runs: 0, executions: 0, sends: 0, more: false });
    expect(again.queries.filter((sql) => /DELETE FROM run_step_executions/.test(sql))).to.deep.equal([]);
  });

  it('deletes the finished sends of those runs too (the outbox rows of their webhook steps), in bounded chunks; a send still held by a dispatcher stays', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(tenant.key).sequences.create({
        name: 'Hooks',
        status: 'active',
        steps: [{ id: 'one', type: 'webhook', endpointId: webhook.id }, { id: 'two', type: 'webhook', endpointId: webhook.id }],
      });
      const contacts = [];
      for (let i = 0; i < 3; i += 1) contacts.push(await buildContact(tenant.accountId));
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
      const { engine } = engineAt();
      await engine.runUntilIdle();
      const runIds = (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs.map((run) => run.id).sort();
      expect([...(await sendsOf(runIds)).values()]).to.deep.equal([2, 2, 2]);
      const now = Date.now() + 60_000;
      // Two ended long ago, one of them with a send a dispatcher holds; the third recently.
      await endedAt(runIds[0]!, new Date(now - 120 * DAY));
      await endedAt(runIds[1]!, new Date(now - 100 * DAY));
      await endedAt(runIds[2]!, new Date(now - 10 * DAY));
      await execute(testDb(), "UPDATE outbox SET status = 'sending' WHERE run_id = ? AND step_id = 'two'", [runIds[1]!]);

      const options = { before: new Date(now - 90 * DAY), runsPerChunk: 10, rowsPerChunk: 2, maxChunks: 1 };
      // Executions first (4 of them, 2 a statement), then the sends (3 finished, 2 a statement);
      // a full statement does the same chunk again.
      expect(await pruneRunHistory(testDb(), options)).to.deep.equal({ runs: 0, executions: 2, sends: 0, more: true });
      expect(await pruneRunHistory(testDb(), options)).to.deep.equal({ runs: 0, executions: 2, sends: 0, more: true });
      expect(await pruneRunHistory(testDb(), options)).to.deep.equal({ runs: 0, executions: 0, sends: 2, more: true });
      expect(await pruneRunHistory(testDb(), options)).to.deep.equal({ runs: 2, executions: 0, sends: 1, more: false });
      expect([...(await sendsOf(runIds)).values()]).to.deep.equal([0, 1, 2]);
      expect([...(await executionsOf(runIds)).values()]).to.deep.equal([0, 0, 2]);
    } finally {
      await receiver.close();
    }
  });

  it('runs on its interval, at once again while a backlog is left, and stops when asked', async () => {
    await finishedRuns(3);
    const clock = manualTimers(Date.now() + 10 * 60_000);
    const task = runHistoryTask(
      testDb(),
      { historyDays: 0.001, intervalMs: 3_600_000, runsPerChunk: 1, rowsPerChunk: 100, maxChunks: 2 },
      { logger: silentLogger, timers: clock.timers },
    );
    task.start();
    expect(await clock.nextWait()).to.equal(3_600_000);
    clock.fire();
    // Two of three runs in the first pass: the next one comes at once.
    expect(await clock.nextWait()).to.equal(0);
    clock.fire();
    expect(await clock.nextWait()).to.equal(3_600_000);
    const [{ n }] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM run_step_executions', []);
    expect(Number(n)).to.equal(0);
    await task.stop();
  });

  it('reads RUN_HISTORY_DAYS: 90 by default, a positive whole number of days', () => {
    expect(loadConfig({}).runHistoryDays).to.equal(90);
    expect(loadConfig({ RUN_HISTORY_DAYS: '7' }).runHistoryDays).to.equal(7);
    for (const bad of ['0', '-1', '1.5', 'x', '4000']) {
      expect(() => loadConfig({ RUN_HISTORY_DAYS: bad }), bad).to.throw(/RUN_HISTORY_DAYS/);
    }
  });
});
