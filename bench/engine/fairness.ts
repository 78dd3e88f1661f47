import { randomUUID } from 'node:crypto';
import { createAccount } from '../../src/services/accounts';
import { dueAccountsSql, SLICE_ACCOUNTS } from '../../src/services/engine/due-accounts';
import { CLAIM_SELECT, earliestDueSql } from '../../src/services/engine/run-queue';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { waitForQuietInnodb } from '../lib/database';
import type { EngineBench } from './context';
import { percentile, productEngine, sleep, StatementCounter } from './context';
import { seedContacts, seedRuns } from './seed';

// Issue 27, item 6: one account's burst beside another account's few due runs. Account A gets
// `burst` runs of a tag step, account B `few`; all are due at once, A's first: in due order
// alone, B would wait for the whole burst. One engine as the product runs it; B's lag is from
// its due time to its run's completion (completed_at), A's rate is A's runs completed per
// second over the same time and over a window after B is done.

export interface FairnessResult {
  burst: number;
  few: number;
  // B: due to done (ms), and when its last run was done (s after the engine started).
  lagsMs: number[];
  fewDoneSeconds: number;
  // A's completed runs per second while B was served, and over the whole window.
  burstRateWhileFew: number;
  burstRate: number;
  burstDone: number;
  windowSeconds: number;
  passes: number;
  statementsPerPass: number;
  topStatements: Array<[string, { count: number; ms: number }]>;
  // The claim's statements with the burst due, as a backlogged pass sends them.
  explains: Array<{ statement: string; rows: Record<string, unknown>[] }>;
}

const FAR = new Date('2100-01-01T00:00:00.000Z');
const WARM_RUNS = 2_000;
const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 180);

// A first engine over WARM_RUNS runs of another sequence (JIT, the version cache, InnoDB's
// pages), as the throughput part does: the measured engine then runs as a long-lived one does.
async function warmUp(bench: EngineBench, step: { id: string; type: 'tag'; add: string[] }, progress: (text: string) => void) {
  progress(`fairness: warm-up, ${WARM_RUNS} runs`);
  const sequenceId = await bench.newSequence([step]);
  const contacts = await seedContacts(bench.admin, bench.accountId, WARM_RUNS);
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: WARM_RUNS, stepId: step.id, state: 'due', dueAt: new Date(Date.now() - 1_000) });
  const { engine, counts, db } = productEngine(bench.url, new StatementCounter());
  engine.start();
  try {
    const bound = performance.now() + 300_000;
    while ((counts.succeeded.get(step.type) ?? 0) < WARM_RUNS && performance.now() < bound) await sleep(20);
  } finally {
    await engine.stop(10_000);
    await db.close();
  }
}

export async function measureFairness(bench: EngineBench, burst: number, few: number, windowSeconds: number, progress: (text: string) => void): Promise<FairnessResult> {
  const other = await createAccount(bench.db, { name: `bench fairness ${randomUUID()}`, maxActiveRuns: null });
  const step = { id: 'mark', type: 'tag' as const, add: ['fair'] };
  const burstSequence = await bench.newSequence([step]);
  const fewSequence = (await createSequence(bench.db, { accountId: other.id, name: `bench ${randomUUID()}`, status: 'active', steps: [step] })).id;
  progress(`fairness: seeding ${burst} contacts and runs of account A, ${few} of account B`);
  const burstContacts = await seedContacts(bench.admin, bench.accountId, burst);
  const fewContacts = await seedContacts(bench.admin, other.id, few);
  // Seeded far ahead, then made due in two UPDATEs just before the engine starts: A's runs a
  // second before B's, so that B's are behind every one of A's in due order.
  await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId: burstSequence, contacts: burstContacts, count: burst, stepId: step.id, state: 'due', dueAt: FAR });
  await seedRuns(bench.admin, { accountId: other.id, sequenceId: fewSequence, contacts: fewContacts, count: few, stepId: step.id, state: 'due', dueAt: FAR });
  await warmUp(bench, step, progress);
  progress('fairness: making them due');
  await bench.admin.query('UPDATE sequence_runs SET due_at = ? WHERE sequence_id = ?', [new Date(Date.now() - 1_000), burstSequence]);
  // InnoDB purges what that UPDATE left (half a million index entries) and writes its pages
  // out in the background: the engine starts once that has settled, with B due from then on.
  const quiet = await waitForQuietInnodb(bench.admin, QUIET_SECONDS);
  progress(`fairness: InnoDB ${quiet.quiet ? 'settled' : 'still busy'} after ${quiet.seconds.toFixed(0)} s`);
  const fewDue = new Date();
  await bench.admin.query('UPDATE sequence_runs SET due_at = ? WHERE sequence_id = ?', [fewDue, fewSequence]);

  const explains = await explainClaim(bench, other.id, new Date());

  const statements = new StatementCounter();
  const { engine, db } = productEngine(bench.url, statements);
  const started = performance.now();
  engine.start();
  let fewDoneSeconds = NaN;
  let burstAtFewDone = 0;
  try {
    const bound = started + windowSeconds * 1000 + 600_000;
    for (;;) {
      const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [fewSequence]);
      if (Number((rows as Array<{ c: number }>)[0].c) >= few) break;
      if (performance.now() > bound) throw new Error(`fairness: B's ${few} runs not done after ${windowSeconds + 600} s`);
      await sleep(20);
    }
    fewDoneSeconds = (performance.now() - started) / 1000;
    burstAtFewDone = await completedOf(bench, burstSequence);
    progress(`fairness: B done after ${fewDoneSeconds.toFixed(2)} s; A for the rest of ${windowSeconds} s`);
    const windowEnd = started + windowSeconds * 1000;
    while (performance.now() < windowEnd) await sleep(50);
  } finally {
    await engine.stop(10_000);
    await db.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  const burstDone = await completedOf(bench, burstSequence);
  const [lagRows] = await bench.admin.query(
    "SELECT TIMESTAMPDIFF(MICROSECOND, ?, completed_at) / 1000 AS ms FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'",
    [fewDue, fewSequence],
  );
  // What is left of the burst is set aside, so that later parts find nothing of it due.
  await bench.admin.query('UPDATE sequence_runs SET due_at = NULL WHERE sequence_id = ? AND due_at IS NOT NULL', [burstSequence]);
  const passes = [...statements.shapes].filter(([shape]) => shape.startsWith(CLAIM_SELECT.slice(0, CLAIM_SELECT.indexOf(' ?')))).reduce((sum, [, n]) => sum + n.count, 0);
  return {
    burst,
    few,
    lagsMs: (lagRows as Array<{ ms: number | string }>).map((row) => Number(row.ms)),
    fewDoneSeconds,
    burstRateWhileFew: burstAtFewDone / fewDoneSeconds,
    burstRate: burstDone / elapsed,
    burstDone,
    windowSeconds: elapsed,
    passes,
    statementsPerPass: statements.total / Math.max(1, passes),
    topStatements: [...statements.shapes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 10),
    explains,
  };
}

async function explainClaim(bench: EngineBench, fewAccountId: string, now: Date) {
  const statements: Array<[string, unknown[]]> = [
    [`${CLAIM_SELECT} FOR UPDATE SKIP LOCKED`, [now, 500]],
    [dueAccountsSql(SLICE_ACCOUNTS), ['']],
    [`${earliestDueSql(1, 250)} FOR UPDATE SKIP LOCKED`, [fewAccountId, now, now]],
  ];
  const explains = [];
  for (const [statement, values] of statements) {
    const [rows] = await bench.admin.query(`EXPLAIN ${statement}`, values);
    explains.push({ statement: statement.replace(/\s+/g, ' '), rows: rows as Record<string, unknown>[] });
  }
  return explains;
}

async function completedOf(bench: EngineBench, sequenceId: string): Promise<number> {
  const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [sequenceId]);
  return Number((rows as Array<{ c: number }>)[0].c);
}

export function fairnessP99(result: FairnessResult): number {
  return percentile(result.lagsMs, 99);
}
