import { expect } from 'chai';
import { toDate } from '../../../src/db/sql/rows';
import { select } from '../../../src/db/sql/statements';
import { runReleaseTask } from '../../../src/services/maintenance/run-release-task';
import { releasePendingRuns, releaseRunsChunk } from '../../../src/services/sequences/release-runs';
import { caller, silentLogger } from '../../support/app';
import { failStatements } from '../../support/commit-faults';
import { captureQueries, testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';
import { engineAt } from '../engine/support';

// Big sequences stay operable (docs/sequences.md "How runs move"): setting a sequence active
// again, or changing its sending window, answers at once whatever its number of runs, and a
// maintenance task makes the runs due in bounded chunks, carried on after a crash.

const DAY = 86_400_000;

// An active sequence of one tag step with `count` runs, all set aside by the engine while the
// sequence was paused.
async function parkedRuns(count: number, extra: Record<string, unknown> = {}) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({ name: 'Big', status: 'active', steps: [{ id: 'mark', type: 'tag', add: ['x'] }], ...extra } as never);
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(tenant.accountId));
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
  await caller(tenant.key).sequences.update({ id: sequence.id, status: 'paused' });
  const clock = engineAt();
  expect(await clock.engine.runUntilIdle()).to.equal(count);
  expect(await dueRuns(sequence.id)).to.equal(0);
  return { ...tenant, sequence, clock };
}

async function dueRuns(sequenceId: string): Promise<number> {
  const [row] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND due_at IS NOT NULL', [sequenceId]);
  return Number(row!.n);
}

async function pendingReleases(): Promise<Array<{ kind: string; position_status: string }>> {
  return select(testDb(), 'SELECT kind, position_status FROM sequence_run_releases', []);
}

describe('releasing the runs of a big sequence', () => {
  it('PATCH status active answers without touching the runs; the task makes them due in chunks of chunkSize', async () => {
    const { key, sequence, clock } = await parkedRuns(7);
    const { result, queries } = await captureQueries(() => caller(key).sequences.update({ id: sequence.id, status: 'active' }));
    expect(result.sequence.status).to.equal('active');
    expect(queries.filter((sql) => /UPDATE sequence_runs/.test(sql)), 'the PATCH writes no run').to.deep.equal([]);
    expect(await dueRuns(sequence.id)).to.equal(0);
    expect(await pendingReleases()).to.deep.equal([{ kind: 'unpark', position_status: 'pending' }]);

    const counts: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const chunk = await releaseRunsChunk(testDb(), 3);
      counts.push(chunk.released);
      expect(await dueRuns(sequence.id)).to.equal(counts.reduce((a, b) => a + b, 0));
    }
    expect(counts).to.deep.equal([3, 3, 1]);
    // The pending runs are walked; the running ones next (none), then the release is gone.
    expect(await pendingReleases()).to.deep.equal([{ kind: 'unpark', position_status: 'running' }]);
    expect(await releaseRunsChunk(testDb(), 3)).to.deep.equal({ released: 0, worked: true });
    expect(await pendingReleases()).to.deep.equal([]);
    expect(await releaseRunsChunk(testDb(), 3)).to.deep.equal({ released: 0, worked: false });

    clock.advance(1_000);
    expect(await clock.engine.runUntilIdle()).to.equal(7);
    const runs = (await caller(key).sequences.runs({ id: sequence.id, limit: 100 })).runs;
    expect(runs.map((run) => run.status)).to.deep.equal(Array(7).fill('completed'));
  });

  it('reads chunkSize index entries per chunk along sequence_runs_sequence_status_created, and updates by primary key', async function () {
    if (testDb().dialect !== 'sqlite') this.skip();
    const { key, sequence } = await parkedRuns(3);
    await caller(key).sequences.update({ id: sequence.id, status: 'active' });
    const { queries } = await captureQueries(() => releaseRunsChunk(testDb(), 2));
    const walk = queries.find((sql) => /SELECT id, created_at FROM sequence_runs/.test(sql))!.replace(/^Executing \([^)]*\): /, '');
    const at = new Date(0);
    const plan = await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${walk}`, [sequence.id, 'pending', at, at, at, '']);
    expect(plan.map((row) => row.detail).join(' | ')).to.match(/^SEARCH r USING (COVERING )?INDEX sequence_runs_sequence_status_created \(sequence_id=\? AND status=\? AND created_at>\?\)$/);
    const update = queries.find((sql) => /UPDATE sequence_runs SET due_at/.test(sql))!.replace(/^Executing \([^)]*\): /, '');
    const updatePlan = await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${update}`, [new Date(), 'a', 'b', 'pending']);
    expect(updatePlan.map((row) => row.detail).join(' | ')).to.match(/^SEARCH sequence_runs USING INDEX sqlite_autoindex_sequence_runs_1 \(id=\?\)$/);
  });

  it('carries on after a crash from the chunk it was doing: a new process finds the release and its place', async () => {
    const { key, sequence } = await parkedRuns(5);
    await caller(key).sequences.update({ id: sequence.id, status: 'active' });
    expect((await releaseRunsChunk(testDb(), 2)).released).to.equal(2);
    // The next chunk dies after making its runs due, before it wrote its place: rolled back
    // whole, runs included.
    const crash = failStatements(/UPDATE sequence_run_releases SET position/);
    try {
      await releaseRunsChunk(testDb(), 2).then(() => expect.fail('the chunk should fail'), () => undefined);
    } finally {
      crash.restore();
    }
    expect(crash.failed()).to.equal(1);
    expect(await dueRuns(sequence.id)).to.equal(2);
    // Another process's task, started afresh, finds the release and finishes it.
    const clock = manualTimers(Date.now());
    const { task } = runReleaseTask(testDb(), { intervalMs: 1_000, chunkSize: 2, maxChunks: 10 }, { logger: silentLogger, timers: clock.timers });
    expect(await task.runOnce()).to.equal(false);
    expect(await dueRuns(sequence.id)).to.equal(5);
    expect(await pendingReleases()).to.deep.equal([]);
  });

  it('leaves the release for the next pass after maxChunks, and the task comes back at once', async () => {
    const { key, sequence } = await parkedRuns(5);
    const clock = manualTimers(Date.now());
    const releases = runReleaseTask(testDb(), { intervalMs: 1_000, chunkSize: 1, maxChunks: 2 }, { logger: silentLogger, timers: clock.timers });
    releases.start();
    try {
      expect(await clock.nextWait()).to.equal(1_000);
      // The PATCH wakes the task of its own process at once.
      await caller(key).sequences.update({ id: sequence.id, status: 'active' });
      expect(await clock.nextWait()).to.equal(0);
      clock.fire();
      expect(await clock.nextWait()).to.equal(0);
      expect(await dueRuns(sequence.id)).to.equal(2);
      while ((await pendingReleases()).length > 0) {
        clock.fire();
        await clock.nextWait();
      }
      expect(await dueRuns(sequence.id)).to.equal(5);
      expect(await clock.nextWait()).to.equal(1_000);
    } finally {
      await releases.stop();
    }
  });

  it('two processes release one sequence together: every run once, none left', async () => {
    const { key, sequence } = await parkedRuns(12);
    await caller(key).sequences.update({ id: sequence.id, status: 'active' });
    const options = { chunkSize: 2, maxChunks: 100 };
    const [a, b] = await Promise.all([releasePendingRuns(testDb(), options), releasePendingRuns(testDb(), options)]);
    expect(a.released + b.released).to.equal(12);
    expect(await dueRuns(sequence.id)).to.equal(12);
    expect(await pendingReleases()).to.deep.equal([]);
  });

  it('a sequence paused again before its release ran: the release is dropped, the runs stay set aside', async () => {
    const { key, sequence } = await parkedRuns(3);
    await caller(key).sequences.update({ id: sequence.id, status: 'active' });
    await caller(key).sequences.update({ id: sequence.id, status: 'paused' });
    expect(await releasePendingRuns(testDb(), { chunkSize: 10, maxChunks: 10 })).to.deep.equal({ released: 0, more: false });
    expect(await dueRuns(sequence.id)).to.equal(0);
    expect(await pendingReleases()).to.deep.equal([]);
  });

  it('a new sending window: the runs held for the old opening are due at the change, in chunks; waits keep their end', async () => {
    const tenant = await buildTenant();
    // Tomorrow 12:00Z: outside a 09:00-10:00 UTC window.
    const noon = Math.floor(Date.now() / DAY) * DAY + DAY + 12 * 3_600_000;
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Window',
      status: 'active',
      steps: [{ id: 'mark', type: 'tag', add: ['x'] }],
      sendingWindow: { timeZone: 'UTC', from: '09:00', to: '10:00' },
    });
    const waiting = (await caller(tenant.key).sequences.create({ name: 'Wait', status: 'active', steps: [{ id: 'w', type: 'wait', duration: 'P3D' }, { id: 'mark', type: 'tag', add: ['x'] }] })).sequence;
    const contacts = [];
    for (let i = 0; i < 5; i += 1) contacts.push(await buildContact(tenant.accountId));
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
    await caller(tenant.key).sequences.enroll({ id: waiting.id, contactIds: contacts.map((c) => c.id) });
    const { engine, advance } = engineAt(noon);
    expect(await engine.runOnce()).to.equal(10);
    const held = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    expect(held.map((row) => toDate(row.due_at).toISOString().slice(11))).to.deep.equal(Array(5).fill('09:00:00.000Z'));

    const before = Date.now();
    await caller(tenant.key).sequences.update({ id: sequence.id, sendingWindow: null });
    await caller(tenant.key).sequences.update({ id: waiting.id, sendingWindow: { timeZone: 'UTC', from: '00:00', to: '24:00' } });
    const released = await releasePendingRuns(testDb(), { chunkSize: 2, maxChunks: 100 });
    expect(released).to.deep.equal({ released: 5, more: false });
    const due = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    for (const row of due) expect(toDate(row.due_at).getTime()).to.be.within(before, Date.now());
    const waits = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE sequence_id = ?', [waiting.id]);
    for (const row of waits) expect(toDate(row.due_at).getTime()).to.be.greaterThan(noon + 2 * DAY);
    advance(1_000);
    await engine.runUntilIdle();
    const runs = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    expect(runs.map((run) => run.status)).to.deep.equal(Array(5).fill('completed'));
  });
});
