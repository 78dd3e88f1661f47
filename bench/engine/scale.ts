import { waitForQuietInnodb } from '../lib/database';
import { median } from '../lib/report';
import { claimDueRuns, CLAIM_SELECT, loadClaimedRuns, nextDueAt } from '../../src/services/engine/run-queue';
import { planRun } from '../../src/services/engine/plan-run';
import type { RunResult } from '../../src/services/engine/claimed-run';
import { recordBatch } from '../../src/services/engine/record-batch';
import { readVersions, versionKey } from '../../src/services/runs/sequence-versions';
import type { EngineBench } from './context';
import { productEngine, StatementCounter } from './context';
import { seedContacts, seedRuns, type SeededContacts } from './seed';

// Item 3: the cost of 500 due tag runs with 10,000 and with 1,000,000 runs waiting in a wait
// step (due in 30 days), and the claim's plan at both sizes.

const BATCH = 500;
const WAIT_CONTACTS = 10_000;

export interface SizeResult {
  waiting: number;
  seedSeconds: number;
  quietSeconds: number;
  // The product engine's passes over 500 due runs, to idle (ms), one per round.
  engineMs: number[];
  enginePasses: number[];
  // One batch of 500 by the engine's own functions, timed piece by piece (ms), one per round.
  pieces: Array<{ claim: number; load: number; versions: number; record: number; total: number }>;
  explain: Record<string, unknown>[];
  // InnoDB when the rounds began, and the pages it read from disk during each engine batch
  // (the server's global counter: other databases' work on a shared server counts too).
  innodb: { bufferPoolMiB: number; dirtyPercent: number; historyLength: number; quiet: boolean };
  diskReads: number[];
  // The loop's other statement: nextDueAt (run-queue.ts), which it sends after every pass that
  // found less than a batch, timed alone (ms), and its plan.
  nextDueMs: number[];
  nextDueExplain: Record<string, unknown>[];
  nextDueStatement: string;
}

const QUIET_SECONDS = Number(process.env.BENCH_QUIET_SECONDS ?? 180);

async function innodbStatus(bench: EngineBench): Promise<Record<string, number>> {
  const [rows] = await bench.admin.query(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_history_list_length', 'Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_total', 'Innodb_buffer_pool_reads', 'Innodb_page_size')",
  );
  return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((row) => [row.Variable_name, Number(row.Value)]));
}

export async function measureScale(bench: EngineBench, sizes: readonly number[], rounds: number, progress: (text: string) => void): Promise<SizeResult[]> {
  const waitContacts = await seedContacts(bench.admin, bench.accountId, WAIT_CONTACTS);
  const batchContacts = await seedContacts(bench.admin, bench.accountId, BATCH * (rounds + 1) * 2 * sizes.length);
  const tagSequence = await bench.newSequence([{ id: 'mark', type: 'tag', add: ['scale'] }]);
  let batchNumber = 0;
  let waiting = 0;
  const results: SizeResult[] = [];
  for (const size of sizes) {
    const seedStarted = performance.now();
    while (waiting < size) {
      // One wait sequence per 10,000 runs: a run per contact and sequence.
      const count = Math.min(WAIT_CONTACTS, size - waiting);
      const sequenceId = await bench.newSequence([{ id: 'pause', type: 'wait', duration: 'P30D' }, { id: 'done', type: 'exit' }]);
      await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts: waitContacts, count, stepId: 'pause', state: 'waiting', dueAt: new Date(Date.now() + 30 * 86_400_000) });
      waiting += count;
      if (waiting % 100_000 === 0) progress(`scale: ${waiting} runs waiting (${Math.round((performance.now() - seedStarted) / 1000)} s)`);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    await bench.admin.query('ANALYZE TABLE sequence_runs');
    // Bounded: on a shared server others' writes may keep it from ever being quiet.
    const quiet = await waitForQuietInnodb(bench.admin, QUIET_SECONDS);
    const status = await innodbStatus(bench);
    progress(`scale: ${waiting} waiting, seeded in ${seedSeconds.toFixed(0)} s, InnoDB ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.seconds.toFixed(0)} s`);
    const result: SizeResult = {
      waiting,
      seedSeconds,
      quietSeconds: quiet.seconds,
      engineMs: [],
      enginePasses: [],
      pieces: [],
      explain: [],
      innodb: {
        bufferPoolMiB: ((status.Innodb_buffer_pool_pages_total ?? 0) * (status.Innodb_page_size ?? 16384)) / 1048576,
        dirtyPercent: (100 * (status.Innodb_buffer_pool_pages_dirty ?? 0)) / Math.max(1, status.Innodb_buffer_pool_pages_total ?? 1),
        historyLength: status.Innodb_history_list_length ?? 0,
        quiet: quiet.quiet,
      },
      diskReads: [],
      nextDueMs: [],
      nextDueExplain: [],
      nextDueStatement: '',
    };
    const seedBatch = () =>
      seedRuns(bench.admin, {
        accountId: bench.accountId,
        sequenceId: tagSequence,
        contacts: batchContacts,
        count: BATCH,
        contactOffset: BATCH * batchNumber++,
        stepId: 'mark',
        state: 'due',
        dueAt: new Date(Date.now() - 1000),
      });
    // Round 0 warms up (JIT, the pages the batch touches) and is not counted.
    for (let round = 0; round <= rounds; round += 1) {
      const statements = new StatementCounter();
      const { engine, db } = productEngine(bench.url, statements);
      await engine.runOnce(); // nothing due: opens the pool's connection outside the clock
      await seedBatch();
      if (round === 1) result.explain = await explainClaim(bench, BATCH);
      const readsBefore = (await innodbStatus(bench)).Innodb_buffer_pool_reads ?? 0;
      const started = performance.now();
      let claimed = 0;
      let passes = 0;
      for (;;) {
        const n = await engine.runOnce();
        if (n === 0) break;
        claimed += n;
        passes += 1;
      }
      const engineMs = performance.now() - started;
      const diskReads = ((await innodbStatus(bench)).Innodb_buffer_pool_reads ?? 0) - readsBefore;
      if (claimed !== BATCH) throw new Error(`scale: the engine claimed ${claimed} runs, not ${BATCH}`);
      await seedBatch();
      const pieces = await timedBatch(db);
      await db.close();
      progress(`scale: ${waiting} waiting, round ${round}/${rounds}${round === 0 ? ' (warm-up)' : ''}: engine ${engineMs.toFixed(0)} ms in ${passes} passes (${diskReads} pages read from disk), one batch ${pieces.total.toFixed(0)} ms`);
      if (round === 0) continue;
      result.engineMs.push(engineMs);
      result.diskReads.push(diskReads);
      result.enginePasses.push(passes);
      result.pieces.push(pieces);
    }
    {
      const statements = new StatementCounter();
      const { db } = productEngine(bench.url, statements);
      await db.sequelize.query('SELECT 1'); // the pool's first connection (and its version check) outside the clock
      for (let i = 0; i < 5; i += 1) {
        const started = performance.now();
        await nextDueAt(db);
        result.nextDueMs.push(performance.now() - started);
      }
      await db.close();
      // The statement as the engine sent it (it has no parameters).
      const statement = [...statements.shapes.keys()].find((shape) => /^SELECT .*\bsequence_runs\b/i.test(shape)) ?? '';
      if (!statement) throw new Error('scale: nextDueAt sent no SELECT on sequence_runs');
      const [rows] = await bench.admin.query(`EXPLAIN ${statement.replace(/;$/, '')}`);
      result.nextDueStatement = statement;
      result.nextDueExplain = rows as Record<string, unknown>[];
    }
    results.push(result);
  }
  return results;
}

// What SequenceEngine.pass() does for a batch of tag runs, with a clock around each part.
async function timedBatch(db: import('../../src/db/database').Database) {
  const at = () => performance.now();
  const t0 = at();
  const now = new Date();
  const claim = await claimDueRuns(db, now, { limit: BATCH, leaseMs: 60_000 });
  const t1 = at();
  const runs = await loadClaimedRuns(db, claim);
  const t2 = at();
  const versions = await readVersions(db, runs.map((run) => ({ sequenceId: run.sequenceId, version: run.version })));
  const t3 = at();
  const local: RunResult[] = [];
  for (const run of runs) {
    const planned = planRun(run, versions.get(versionKey(run.sequenceId, run.version)), now);
    if (planned.kind === 'step' && planned.outcome.kind === 'send') throw new Error('scale: a tag batch planned a webhook');
    local.push(planned);
  }
  await recordBatch(db, local, now);
  const t4 = at();
  if (claim.runs.length !== BATCH) throw new Error(`scale: claimed ${claim.runs.length}, not ${BATCH}`);
  return { claim: t1 - t0, load: t2 - t1, versions: t3 - t2, record: t4 - t3, total: t4 - t0 };
}

// EXPLAIN of the claim as the engine sends it on MariaDB (run-queue.ts: CLAIM_SELECT with
// FOR UPDATE SKIP LOCKED).
export async function explainClaim(bench: EngineBench, limit: number): Promise<Record<string, unknown>[]> {
  const [rows] = await bench.admin.query(`EXPLAIN ${CLAIM_SELECT} FOR UPDATE SKIP LOCKED`, [new Date(), limit]);
  return rows as Record<string, unknown>[];
}

export function claimPlanOk(rows: readonly Record<string, unknown>[]): boolean {
  return rows.length === 1 && rows[0]!.key === 'sequence_runs_due' && rows[0]!.type === 'range';
}

export function medianOf(values: readonly number[]): number {
  return median([...values]);
}

export type { SeededContacts };
