import { randomUUID } from 'node:crypto';
import { openDatabase, prepareDatabase, type Database } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import { withTransaction } from '../src/db/sql/transaction';
import { createAccount } from '../src/services/accounts';
import { countMessageDays, countRunProgress, type DayMetric, type RunProgress } from '../src/services/analytics/progress-counters';
import { sequenceStats } from '../src/services/analytics/sequence-stats';
import { createSequence } from '../src/services/sequences/sequence-admin';
import { ensureNumbers, seedContacts, seedRuns } from './engine/seed';
import { openBenchDatabase } from './lib/database';
import { fixed, median, table } from './lib/report';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench:stats`: GET /sequences/{id}/stats (the service's sequenceStats, in process) for
// two sequences of one account, one with BENCH_STATS_SMALL runs (10,000) and one with
// BENCH_STATS_LARGE (1,000,000), timed side by side in one run: the answer must stay within
// 1.2 times the small one's (issue 29). On MariaDB (BENCH_DATABASE_URL, or the benchmark's own).
//
// The runs are seeded into sequence_runs set-based (as bench:engine does). Their counters are
// written by the counting code itself (analytics/progress-counters.ts), as the engine's records
// would have written them: each run enrolled on one of the last 30 days, then moved step by
// step in transactions of 500 runs (the engine's batch), each transaction on a random shard.
// Of every 20 runs: one still waits at the first step, one exits there (exit rule), one is
// unenrolled at the third, one fails at the second, one waits at the fourth, the rest complete;
// the two message steps send, and most messages are delivered and some read.

const SMALL = numberFrom('BENCH_STATS_SMALL', 10_000);
const LARGE = numberFrom('BENCH_STATS_LARGE', 1_000_000);
const BATCH = 500;
const ROUNDS = numberFrom('BENCH_STATS_ROUNDS', 300);
const DAY_MS = 86_400_000;
const STEPS = [
  { id: 'welcome-wait', type: 'wait' as const, duration: 'PT1H' },
  { id: 'welcome-mail', type: 'tag' as const, add: ['welcomed'] },
  { id: 'two-days', type: 'wait' as const, duration: 'P2D' },
  { id: 'is-vip', type: 'tag' as const, add: ['checked'] },
  { id: 'offer-mail', type: 'tag' as const, add: ['offered'] },
];

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench:stats: ${text}\n`);

async function main() {
  const startedLoad = loadAverage();
  const database = await openBenchDatabase();
  const db = openDatabase(database.url);
  await prepareDatabase(db);
  await migrateToLatest(db);
  await ensureNumbers(database.admin);
  const account = await createAccount(db, { name: `bench stats ${randomUUID()}`, maxActiveRuns: null });
  const contacts = await seedContacts(database.admin, account.id, Math.max(SMALL, LARGE));
  const sizes = [SMALL, LARGE];
  const sequences: string[] = [];
  for (const size of sizes) {
    const id = (await createSequence(db, { accountId: account.id, name: `stats ${size}`, status: 'active', steps: STEPS })).id;
    sequences.push(id);
    progress(`seeding ${size} runs into sequence_runs`);
    await seedRuns(database.admin, { accountId: account.id, sequenceId: id, contacts, count: size, stepId: STEPS[0]!.id, state: 'waiting', dueAt: null });
    progress(`counting ${size} runs' progress through the counters, ${BATCH} runs a transaction`);
    const started = performance.now();
    const transactions = await countProgress(db, id, size);
    progress(`  ${transactions} transactions in ${fixed((performance.now() - started) / 1000, 1)} s`);
  }
  await database.admin.query('ANALYZE TABLE sequence_step_days, sequence_days, sequence_step_waiting, sequence_runs');

  // Side by side, alternating, so that both sizes meet the same machine load.
  const times: number[][] = sizes.map(() => []);
  for (let round = 0; round < 20; round += 1) for (const id of sequences) await sequenceStats(db, { accountId: account.id, sequenceId: id, days: 30 });
  for (let round = 0; round < ROUNDS; round += 1) {
    // Each size first in every other round: neither gains from going second (a warm cache).
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const id = sequences[i]!;
      const started = performance.now();
      await sequenceStats(db, { accountId: account.id, sequenceId: id, days: 30 });
      times[i]!.push(performance.now() - started);
    }
  }
  const rows = await counterRows(database.admin, sequences);
  const check = await sequenceStats(db, { accountId: account.id, sequenceId: sequences[1]!, days: 30 });
  const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
  const ratio = median(times[1]!) / median(times[0]!);

  out('# bench:stats: GET /sequences/{id}/stats at two sizes');
  out();
  out(`${machineLine()}; load before: ${startedLoad}, after: ${loadAverage()}`);
  out(`Database: ${database.describe}`);
  out(`${ROUNDS} rounds, alternating; 30 days; ${STEPS.length} steps`);
  out();
  out(
    table(
      ['runs', 'counter rows of the sequence', 'median ms', 'p95 ms'],
      sizes.map((size, i) => [size.toLocaleString('en'), String(rows[i]), fixed(median(times[i]!), 2), fixed(p95(times[i]!), 2)]),
    ),
  );
  out();
  out(`Ratio (large / small, medians): ${fixed(ratio, 2)}  (bound: 1.20) ${ratio <= 1.2 ? 'WITHIN' : 'OVER'}`);
  const first = check.steps[0]!;
  out(`Check (large): first step reached ${first.reached}, waiting ${first.waiting}; enrollments over 30 days ${check.days.reduce((sum, day) => sum + day.enrollments, 0)}`);
  await db.sequelize.close();
  await database.close();
}

// The progress of `size` runs, as the engine's transactions would count it: each move of each
// run (enrolled, each step left and the next reached, its end), in batches of BATCH runs at a
// time on the day the run started.
async function countProgress(db: Database, sequenceId: string, size: number): Promise<number> {
  const now = Date.now();
  let transactions = 0;
  // Each stage: the moves of the runs of one batch (runs first..last of one day).
  const stages: Array<(i: number) => RunProgress | null> = [
    () => ({ sequenceId, from: null, to: STEPS[0]!.id, enrolled: true }),
    ...STEPS.map((step, index) => (i: number): RunProgress | null => {
      const fate = i % 20;
      if (fate === 0 || fate === 1 || (fate === 3 && index > 1) || (fate === 2 && index > 2) || (fate === 4 && index > 3)) {
        if (index === 0 && fate === 1) return { sequenceId, from: step.id, to: null, ended: { status: 'cancelled', reason: 'exitWhen: the contact got the tag "bought"' } };
        return null;
      }
      if (fate === 3 && index === 1) return { sequenceId, from: step.id, to: null, left: { outcome: 'failed' }, ended: { status: 'failed', reason: `step "${step.id}": refused` } };
      if (fate === 2 && index === 2) return { sequenceId, from: step.id, to: null, ended: { status: 'cancelled', reason: 'unenrolled' } };
      if (fate === 4 && index === 3) return null;
      const next = STEPS[index + 1]?.id ?? null;
      return { sequenceId, from: step.id, to: next, left: { outcome: 'completed' }, ...(next === null ? { ended: { status: 'completed' as const, reason: null } } : {}) };
    }),
  ];
  // Run i started on day floor(i * 30 / size) before today: the runs spread evenly over the
  // 30 days, in batches that never span two days.
  const batches: Array<{ first: number; last: number; day: Date }> = [];
  for (let d = 0; d < 30; d += 1) {
    const dayStart = Math.ceil((d * size) / 30);
    const dayEnd = Math.ceil(((d + 1) * size) / 30);
    for (let first = dayStart; first < dayEnd; first += BATCH) batches.push({ first, last: Math.min(dayEnd, first + BATCH), day: new Date(now - d * DAY_MS) });
  }
  for (const { first, last, day } of batches) {
    for (const [stage, moveOf] of stages.entries()) {
      const moves: RunProgress[] = [];
      const messages: Array<{ sequenceId: string; at: Date; metric: DayMetric }> = [];
      for (let i = first; i < last; i += 1) {
        const move = moveOf(i);
        if (!move) continue;
        moves.push(move);
        // The message steps (2 and 5) send as they complete; most are delivered, some read.
        if ((stage === 2 || stage === 5) && move.left?.outcome === 'completed') {
          messages.push({ sequenceId, at: day, metric: 'sent' });
          if (i % 10 !== 0) messages.push({ sequenceId, at: day, metric: 'delivered' });
          if (i % 3 === 0) messages.push({ sequenceId, at: day, metric: 'read' });
        }
      }
      if (moves.length === 0) continue;
      await withTransaction(db, async (transaction) => {
        countRunProgress(db, transaction, day, moves);
        if (messages.length > 0) countMessageDays(db, transaction, messages);
      });
      transactions += 1;
    }
  }
  return transactions;
}

async function counterRows(admin: Awaited<ReturnType<typeof openBenchDatabase>>['admin'], sequences: string[]): Promise<number[]> {
  const counts: number[] = [];
  for (const id of sequences) {
    let total = 0;
    for (const table of ['sequence_step_days', 'sequence_days', 'sequence_step_waiting']) {
      const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM ${table} WHERE sequence_id = ?`, [id]);
      total += Number((rows as Array<{ n: number }>)[0]!.n);
    }
    counts.push(total);
  }
  return counts;
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
