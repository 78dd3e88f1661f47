import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { execute, select } from '../../src/db/sql/statements';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { engineAt } from '../services/engine/support';

// GET /api/v1/sequences/{id}/stats: conversions, split variants and wait_for outcomes
// (docs/analytics.md "Conversions, variants and waits"), read from the runs and their
// executions. A run converted: completed with reason `goal_met`. Goals are met by the activity
// intake; here the runs are marked converted in the database, as that writer leaves them.

const DAY_MS = 86_400_000;
const day = (at: Date) => at.toISOString().slice(0, 10);

// A split sends runs of variant `a` to wait for a checkout and variant `b` (the holdout) out.
const STEPS = [
  { id: 'offer', type: 'split', variants: [{ id: 'a', weight: 1, next: 'checkout' }, { id: 'b', weight: 1, next: 'done' }] },
  { id: 'checkout', type: 'wait_for', activity: 'checkout_completed', timeout: 'PT1S', onTimeout: 'done' },
  { id: 'done', type: 'exit' },
];

async function sequence(key: string, steps: unknown[] = STEPS): Promise<string> {
  const res = await api(key).post('/sequences').send({ name: 'Conversions', status: 'active', steps });
  expect(res.status, res.text).to.equal(201);
  return res.body.sequence.id as string;
}

async function enroll(key: string, accountId: string, sequenceId: string, n: number): Promise<string[]> {
  const contacts = [];
  for (let i = 0; i < n; i += 1) contacts.push(await buildContact(accountId));
  const res = await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: contacts.map((c) => c.id) });
  expect(res.status, res.text).to.be.oneOf([200, 201, 207]);
  const runs = await select<{ id: string }>(testDb(), 'SELECT id FROM sequence_runs WHERE sequence_id = ? ORDER BY id', [sequenceId]);
  expect(runs).to.have.length(n);
  return runs.map((run) => run.id);
}

// What the goal writer leaves: the run completed, reason goal_met, at `at`.
async function convert(runIds: string[], at: Date) {
  await execute(testDb(), "UPDATE sequence_runs SET status = 'completed', reason = 'goal_met', completed_at = ?, due_at = NULL WHERE id IN (?)", [at, runIds]);
}

async function execution(accountId: string, runId: string, visit: number, step: { id: string; type: string }, status: string, detail: unknown, at: Date) {
  await execute(
    testDb(),
    'INSERT INTO run_step_executions (id, account_id, run_id, visit, attempt, step_id, type, status, reason, detail, started_at, finished_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, NULL, ?, ?, ?)',
    [randomUUID(), accountId, runId, visit, step.id, step.type, status, detail === null ? null : JSON.stringify(detail), at, status === 'running' ? null : at],
  );
}

async function stats(key: string, id: string, query = '') {
  const res = await api(key).get(`/sequences/${id}/stats${query}`);
  expect(res.status, res.text).to.equal(200);
  return res.body.stats;
}

describe('GET /sequences/{id}/stats: conversions, variants and waits', () => {
  it('counts the variants a real split chose, the waits that timed out, and the runs that converted after each step', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequence(key);
    const runIds = await enroll(key, accountId, id, 8);
    const { engine, advance } = engineAt();
    await engine.runUntilIdle();
    advance(1_001);
    await engine.runUntilIdle();

    // The variant each run took, as its timeline shows it.
    const variantOf = new Map<string, string>();
    for (const runId of runIds) {
      const res = await api(key).get(`/sequences/${id}/runs/${runId}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.run.status).to.equal('completed');
      const split = res.body.run.executions.find((e: { stepId: string }) => e.stepId === 'offer');
      variantOf.set(runId, split.detail.variant);
    }
    const ofVariant = (variant: string) => runIds.filter((runId) => variantOf.get(runId) === variant);
    const [a, b] = [ofVariant('a'), ofVariant('b')];
    expect(a.length + b.length).to.equal(8);

    // Before any conversion: the variants reached, the waits timed out, nothing converted.
    let figures = await stats(key, id);
    expect(figures.variants).to.deep.equal([
      { stepId: 'offer', variant: 'a', reached: a.length, converted: 0 },
      { stepId: 'offer', variant: 'b', reached: b.length, converted: 0 },
    ]);
    expect(figures.waits).to.deep.equal([{ stepId: 'checkout', matched: 0, timedOut: a.length }]);
    expect(figures.conversions.total).to.equal(0);

    // One run of each variant that has one converts (they had ended, which no goal does; the figures only read the rows).
    const converted = [a[0], b[0]].filter((runId): runId is string => runId !== undefined);
    await convert(converted, new Date());
    figures = await stats(key, id);
    const today = day(new Date());
    expect(figures.conversions.total).to.equal(converted.length);
    expect(figures.conversions.days).to.have.length(30);
    expect(figures.conversions.days[29]).to.deep.equal({ date: today, conversions: converted.length });
    expect(figures.conversions.days.slice(0, 29).every((d: { conversions: number }) => d.conversions === 0)).to.equal(true);
    expect(figures.conversions.steps).to.deep.equal([
      { stepId: 'offer', converted: converted.length },
      { stepId: 'checkout', converted: a.length > 0 ? 1 : 0 },
      { stepId: 'done', converted: converted.length },
    ]);
    expect(figures.variants).to.deep.equal([
      { stepId: 'offer', variant: 'a', reached: a.length, converted: a.length > 0 ? 1 : 0 },
      { stepId: 'offer', variant: 'b', reached: b.length, converted: b.length > 0 ? 1 : 0 },
    ]);
  });

  it('counts conversions by the UTC day they happened, in the window only, and per step from the executions', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequence(key);
    const other = await sequence(key);
    const [r1, r2, r3, r4, r5] = await enroll(key, accountId, id, 5);
    const [elsewhere] = await enroll(key, accountId, other, 1);
    const now = new Date();
    const yesterday = new Date(now.getTime() - DAY_MS);
    const longAgo = new Date(now.getTime() - 10 * DAY_MS);
    const split = STEPS[0]!;
    const wait = STEPS[1]!;
    // r1: variant a, its wait matched, converted yesterday. r2: variant a, timed out, converted
    // today. r3: variant b, converted 10 days ago (outside a 7-day window). r4: variant a,
    // matched, not converted. r5: still waiting (a running execution counts nowhere).
    for (const [runId, variant, outcome, at] of [
      [r1, 'a', 'matched', yesterday],
      [r2, 'a', 'timed_out', now],
      [r4, 'a', 'matched', now],
      [r5, 'a', null, now],
    ] as const) {
      await execution(accountId, runId!, 1, split, 'succeeded', { variant, to: 'checkout' }, at);
      if (outcome === null) await execution(accountId, runId!, 2, wait, 'running', null, at);
      else
        await execution(accountId, runId!, 2, wait, 'succeeded', outcome === 'matched' ? { outcome, activityId: randomUUID(), activity: 'checkout_completed' } : { outcome }, at);
    }
    await execution(accountId, r3!, 1, split, 'succeeded', { variant: 'b', to: 'done' }, longAgo);
    // Another sequence of the account with the same step ids: none of its figures count here.
    await execution(accountId, elsewhere!, 1, split, 'succeeded', { variant: 'a', to: 'checkout' }, now);
    await execution(accountId, elsewhere!, 2, wait, 'succeeded', { outcome: 'timed_out' }, now);
    await convert([elsewhere!], now);
    await convert([r1!], yesterday);
    await convert([r2!], now);
    await convert([r3!], longAgo);

    const week = await stats(key, id, '?days=7');
    expect(week.conversions.total).to.equal(2);
    expect(week.conversions.days).to.have.length(7);
    expect(week.conversions.days.slice(5)).to.deep.equal([
      { date: day(yesterday), conversions: 1 },
      { date: day(now), conversions: 1 },
    ]);
    expect(week.conversions.steps).to.deep.equal([
      { stepId: 'offer', converted: 2 },
      { stepId: 'checkout', converted: 2 },
      { stepId: 'done', converted: 0 },
    ]);
    // r3 took variant b 10 days ago: out of the window, but the current version's variants are all listed.
    expect(week.variants).to.deep.equal([
      { stepId: 'offer', variant: 'a', reached: 4, converted: 2 },
      { stepId: 'offer', variant: 'b', reached: 0, converted: 0 },
    ]);
    expect(week.waits).to.deep.equal([{ stepId: 'checkout', matched: 2, timedOut: 1 }]);

    const month = await stats(key, id);
    expect(month.conversions.total).to.equal(3);
    expect(month.conversions.days.find((d: { date: string }) => d.date === day(longAgo))).to.deep.equal({ date: day(longAgo), conversions: 1 });
    expect(month.variants).to.deep.equal([
      { stepId: 'offer', variant: 'a', reached: 4, converted: 2 },
      { stepId: 'offer', variant: 'b', reached: 1, converted: 1 },
    ]);
  });

  it('answers empty variants and waits, and no conversions, for a sequence without goals, splits or waits', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequence(key, [{ id: 'pause', type: 'wait', duration: 'P1D' }, { id: 'done', type: 'exit' }]);
    await enroll(key, accountId, id, 2);
    const figures = await stats(key, id, '?days=3');
    expect(figures).to.have.all.keys('from', 'to', 'steps', 'days', 'conversions', 'variants', 'waits', 'asOf');
    expect(figures.conversions).to.deep.equal({
      total: 0,
      days: figures.days.map((d: { date: string }) => ({ date: d.date, conversions: 0 })),
      steps: [
        { stepId: 'pause', converted: 0 },
        { stepId: 'done', converted: 0 },
      ],
    });
    expect(figures.variants).to.deep.equal([]);
    expect(figures.waits).to.deep.equal([]);
  });

  it('keeps an older version\'s split variants with runs in the window after the split is gone', async () => {
    const { key, accountId } = await buildTenant();
    const id = await sequence(key);
    const [runId] = await enroll(key, accountId, id, 1);
    await execution(accountId, runId!, 1, STEPS[0]!, 'succeeded', { variant: 'b', to: 'done' }, new Date());
    const res = await api(key).patch(`/sequences/${id}`).send({ steps: [{ id: 'pause', type: 'wait', duration: 'P1D' }, { id: 'done', type: 'exit' }] });
    expect(res.status, res.text).to.equal(200);
    const figures = await stats(key, id);
    expect(figures.variants).to.deep.equal([{ stepId: 'offer', variant: 'b', reached: 1, converted: 0 }]);
    expect(figures.waits).to.deep.equal([]);
  });

  it('answers 400 naming days for a bad window, before reading any figure', async () => {
    const { key } = await buildTenant();
    const id = await sequence(key);
    const res = await api(key).get(`/sequences/${id}/stats?days=0`);
    expect(res.status, res.text).to.equal(400);
    expect(res.body).to.include({ code: 'validation_failed' });
    expect(res.body.error).to.match(/days/);
  });

  it('reads the conversions and the split and wait_for executions by index (SQLite\'s plans)', async function () {
    if (testDb().dialect !== 'sqlite') this.skip();
    const plan = async (sql: string, values: unknown[]) =>
      (await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${sql}`, values)).map((row) => row.detail).join(' | ');
    const at = new Date();
    expect(
      await plan(
        "SELECT COUNT(*) FROM sequence_runs r WHERE r.sequence_id = ? AND r.reason = 'goal_met' AND r.status = 'completed' AND r.completed_at >= ? AND r.completed_at < ?",
        ['s', at, at],
      ),
    ).to.match(/SEARCH r USING INDEX sequence_runs_reason_completed \(sequence_id=\? AND reason=\? AND completed_at>\? AND completed_at<\?\)/);
    expect(
      await plan(
        "SELECT COUNT(*) FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id WHERE e.account_id = ? AND e.step_id IN (?) AND e.type IN ('split', 'wait_for') AND e.status = 'succeeded' AND r.sequence_id = ?",
        ['a', ['offer', 'checkout'], 's'],
      ),
    ).to.match(/SEARCH e USING INDEX run_step_executions_account_step \(account_id=\? AND step_id=\?\)/);
  });
});
