import { CLAIM_SELECT } from '../../src/services/engine/run-queue';
import type { EngineBench } from './context';
import { percentile, productEngine, sleep, StatementCounter } from './context';
import { cpuSpan, type CpuSpan } from './cpu';
import type { WriteTally } from './index-entries';
import { seedContacts, seedRuns } from './seed';

// Items 1 and 2: steps per second of one engine as the product runs it, on runs seeded due
// now; then the lag from due to claim with runs falling due at a steady rate.

export interface ThroughputResult {
  // The case's name: the step's type for a one-step sequence, else ThroughputOptions.name.
  type: string;
  runs: number;
  // Steps of each run (1 for a one-step sequence).
  stepsPerRun: number;
  seconds: number;
  // Runs per second; steps per second is perSecond × stepsPerRun.
  perSecond: number;
  recorded: number;
  passes: number;
  statementsPerPass: number;
  statements: number;
  statementMs: number;
  topStatements: Array<[string, { count: number; ms: number }]>;
  // CPU of the measured runs: this process (the engine and the driver's 5 ms poll) and the database server.
  cpu: CpuSpan;
  // With ThroughputOptions.tally: the index entries the measured runs wrote.
  tally?: WriteTally;
}

// A measurement taken beside the tag case: the projection's lag (p99 under 1 s during the
// case) and its counters against a GROUP BY after it (projection-probe.ts). `started` is called
// just before the measured engine starts (its runs seeded, due); `finished` after it has recorded every
// step and stopped (the projection may still be catching up: the probe waits for it). The rows
// it answers are added to the Targets table as they are ([figure, measured, target, pass]).
export interface TagCaseProbe {
  started(info: ProbeInfo): void | Promise<void>;
  finished(info: ProbeInfo & { seconds: number }): Promise<Array<[string, string, string, boolean]>>;
}

export interface ProbeInfo {
  accountId: string;
  sequenceId: string;
  runs: number;
}

export interface ThroughputOptions {
  // A name for a case of several steps (the report's "step" column).
  name?: string;
  // Counts the measured runs' index entries (the engine's statements, index-entries.ts).
  tally?: WriteTally;
  // The database server's pid, for its CPU (cpu.ts).
  dbPid?: number;
  probe?: TagCaseProbe;
  // Filled by the measured run: the probe's rows.
  probeRows?: Array<[string, string, string, boolean]>;
}

const WARM_RUNS = 2_000;

// Runs of a sequence (one `step`, or `steps`), all due now, through one engine; a warm-up of
// WARM_RUNS first (JIT, pools), then the measured runs with a fresh engine. A run is done when
// its last step has succeeded (for `[tag, branch, update, tag, exit]`: the exit).
export async function measureThroughput(
  bench: EngineBench,
  stepOrSteps: (Record<string, unknown> & { id: string; type: string }) | Array<Record<string, unknown> & { id: string; type: string }>,
  runs: number,
  options: ThroughputOptions = {},
): Promise<ThroughputResult> {
  const steps = Array.isArray(stepOrSteps) ? stepOrSteps : [stepOrSteps];
  const first = steps[0]!;
  const last = steps.at(-1)!;
  const contacts = await seedContacts(bench.admin, bench.accountId, runs + WARM_RUNS);
  const sequenceId = await bench.newSequence(steps as never);
  const statements = new StatementCounter();

  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: WARM_RUNS, contactOffset: runs, stepId: first.id, state: 'due', dueAt: new Date(Date.now() - 1000) });
  await untilSteps(bench.url, statements, last.type, WARM_RUNS, 120_000);

  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: runs, stepId: first.id, state: 'due', dueAt: new Date(Date.now() - 1000) });
  statements.tally = options.tally;
  statements.reset();
  const probeInfo = { accountId: bench.accountId, sequenceId, runs };
  // (Before the engine starts: the probe reads where the counters stand.)
  await options.probe?.started(probeInfo);
  const { seconds, cpu } = await untilSteps(bench.url, statements, last.type, runs, 30 * 60_000, options.dbPid);
  if (options.probe) options.probeRows = await options.probe.finished({ ...probeInfo, seconds });
  const [rows] = await bench.admin.query(
    `SELECT COUNT(*) AS c FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id
     WHERE r.sequence_id = ? AND e.status = 'succeeded'`,
    [sequenceId],
  );
  const recorded = Number((rows as Array<{ c: number }>)[0].c) - WARM_RUNS * steps.length;
  const passes = [...statements.shapes].filter(([shape]) => shape.startsWith(CLAIM_SELECT.slice(0, CLAIM_SELECT.indexOf(' ?')))).reduce((sum, [, n]) => sum + n.count, 0);
  return {
    type: steps.length === 1 ? first.type : (options.name ?? steps.map((s) => s.type).join('-')),
    runs,
    stepsPerRun: steps.length,
    seconds,
    perSecond: runs / seconds,
    recorded,
    passes,
    statementsPerPass: statements.total / Math.max(1, passes),
    statements: statements.total,
    statementMs: [...statements.shapes.values()].reduce((sum, n) => sum + n.ms, 0),
    topStatements: [...statements.shapes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 16),
    cpu,
    tally: options.tally,
  };
}

// Starts a product engine, waits until it has recorded `count` succeeded steps of `type`, stops it.
// CPU is counted from the engine's start to the last step recorded (its stop is left out).
async function untilSteps(url: string, statements: StatementCounter, type: string, count: number, boundMs: number, dbPid?: number, hooks: { started?: () => unknown } = {}) {
  const { engine, counts, db } = productEngine(url, statements);
  const cpu = cpuSpan(dbPid);
  const started = performance.now();
  engine.start();
  try {
    await hooks.started?.();
    for (;;) {
      if ((counts.succeeded.get(type) ?? 0) >= count) break;
      if (performance.now() - started > boundMs) throw new Error(`${type}: only ${counts.succeeded.get(type) ?? 0} of ${count} steps after ${boundMs} ms`);
      await sleep(5);
    }
    return { seconds: (performance.now() - started) / 1000, counts, cpu: cpu.end() };
  } finally {
    await engine.stop(10_000);
    await db.close();
  }
}

export interface LagResult {
  rate: number;
  runs: number;
  windowSeconds: number;
  claimed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  completedSeconds: number;
}

// Runs of a tag step falling due at `rate` per second over `windowSeconds`: seeded far in the
// future, then moved in one UPDATE to start a few seconds after the engine starts; the lag is
// the engine's own lag histogram (claim time minus due time).
export async function measureLag(bench: EngineBench, rate: number, windowSeconds: number): Promise<LagResult> {
  const runs = Math.max(1, Math.round(rate * windowSeconds));
  const contacts = await seedContacts(bench.admin, bench.accountId, runs);
  const sequenceId = await bench.newSequence([{ id: 'mark', type: 'tag', add: ['lag'] }]);
  const far = new Date('2100-01-01T00:00:00.000Z');
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: runs, stepId: 'mark', state: 'due', dueAt: far, stepMicros: 1e6 / rate });
  const statements = new StatementCounter();
  const { engine, counts, db } = productEngine(bench.url, statements);
  engine.start();
  try {
    const origin = new Date(Date.now() + 3_000);
    await bench.admin.query(
      'UPDATE sequence_runs SET due_at = DATE_ADD(?, INTERVAL TIMESTAMPDIFF(MICROSECOND, ?, due_at) MICROSECOND) WHERE sequence_id = ?',
      [origin, far, sequenceId],
    );
    if (Date.now() > origin.getTime()) throw new Error('moving the due times took longer than the 3 s margin: the first runs would start late');
    const bound = origin.getTime() + windowSeconds * 1000 + 120_000;
    while ((counts.succeeded.get('tag') ?? 0) < runs && Date.now() < bound) await sleep(20);
    const completedSeconds = (Date.now() - origin.getTime()) / 1000;
    return {
      rate,
      runs,
      windowSeconds,
      claimed: counts.lagsMs.length,
      p50Ms: percentile(counts.lagsMs, 50),
      p99Ms: percentile(counts.lagsMs, 99),
      maxMs: Math.max(...counts.lagsMs),
      completedSeconds,
    };
  } finally {
    await engine.stop(10_000);
    await db.close();
  }
}

export interface FrozenNeighbourResult {
  rate: number;
  runs: number;
  frozenRuns: number;
  completed: number;
  // Completed runs per second from the first due time to the last completion.
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  frozenRequests: number;
}

// The outbound layer with one receiver frozen (issue 27, item 12): two endpoints of one account,
// one that never answers, the other answering at once, their runs falling due together over
// `windowSeconds`, `rate` per second to the fast one and a tenth of that to the frozen one. The fast
// endpoint's lag is from each run's due time to its completion (the webhook step is its only
// step): before the outbound layer, its outcomes waited for the frozen requests of their batch to
// time out (WEBHOOK_TIMEOUT_MS, 10 s).
export async function measureFrozenNeighbour(
  bench: EngineBench,
  endpoints: { fast: string; frozen: string },
  rate: number,
  windowSeconds: number,
  frozenRequests: () => number,
): Promise<FrozenNeighbourResult> {
  const runs = Math.max(1, Math.round(rate * windowSeconds));
  // The frozen endpoint's runs fall due among the fast ones (a tenth as many), so that a pass
  // that takes fast ones takes frozen ones too, as in the case seen.
  const frozenRuns = Math.max(1, Math.round(runs / 10));
  const contacts = await seedContacts(bench.admin, bench.accountId, runs);
  const frozenSequence = await bench.newSequence([{ id: 'hook', type: 'webhook', endpointId: endpoints.frozen }]);
  const fastSequence = await bench.newSequence([{ id: 'hook', type: 'webhook', endpointId: endpoints.fast }]);
  const far = new Date('2100-01-01T00:00:00.000Z');
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId: frozenSequence, contacts, count: frozenRuns, stepId: 'hook', state: 'due', dueAt: far, stepMicros: 1e7 / rate });
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId: fastSequence, contacts, count: runs, stepId: 'hook', state: 'due', dueAt: far, stepMicros: 1e6 / rate });
  const { engine, db } = productEngine(bench.url, new StatementCounter());
  engine.start();
  try {
    const origin = new Date(Date.now() + 3_000);
    await bench.admin.query(
      'UPDATE sequence_runs SET due_at = DATE_ADD(?, INTERVAL TIMESTAMPDIFF(MICROSECOND, ?, due_at) MICROSECOND) WHERE sequence_id IN (?, ?)',
      [origin, far, fastSequence, frozenSequence],
    );
    const [dueRows] = await bench.admin.query('SELECT id, due_at FROM sequence_runs WHERE sequence_id = ?', [fastSequence]);
    if (Date.now() > origin.getTime()) throw new Error('moving the due times took longer than the 3 s margin: the first runs would start late');
    const dueAt = new Map((dueRows as Array<{ id: string; due_at: Date }>).map((row) => [row.id, new Date(row.due_at).getTime()]));
    const bound = origin.getTime() + windowSeconds * 1000 + 120_000;
    let completed = 0;
    while (Date.now() < bound) {
      const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [fastSequence]);
      completed = Number((rows as Array<{ c: number }>)[0].c);
      if (completed >= runs) break;
      await sleep(100);
    }
    const [doneRows] = await bench.admin.query("SELECT id, completed_at FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [fastSequence]);
    const lags = (doneRows as Array<{ id: string; completed_at: Date }>).map((row) => new Date(row.completed_at).getTime() - dueAt.get(row.id)!);
    const lastDone = Math.max(...(doneRows as Array<{ completed_at: Date }>).map((row) => new Date(row.completed_at).getTime()));
    return {
      rate,
      runs,
      frozenRuns,
      completed,
      perSecond: completed / Math.max(0.001, (lastDone - origin.getTime()) / 1000),
      p50Ms: percentile(lags, 50),
      p99Ms: percentile(lags, 99),
      maxMs: Math.max(...lags),
      frozenRequests: frozenRequests(),
    };
  } finally {
    await engine.stop(1_000);
    await db.close();
  }
}
