import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { onBeforeCommit } from '../../db/sql/transaction';
import { RUN_STATUSES, type RunStatus } from '../../schemas/statuses';

// Runs by status, kept as counters instead of counted over sequence_runs
// (db/migrations/20261211000200-create-run-status-counts.js). Every statement that inserts,
// deletes or changes the status of runs reports its moves here, in its own transaction, with the
// statuses it read under the runs' locks; the moves are summed and written once, just before the
// transaction commits. So the counters commit with the runs, or not at all: exact whatever
// runs concurrently, in any number of processes.
//
// Each transaction adds to one shard of the counters, chosen at random (16 per status), so that
// concurrent writers rarely wait for one another on a counter row; a reader sums the shards.
// The write comes last in the transaction, in status order: its locks are held only for the
// COMMIT, and two writers on one shard take them in one order.
//
// The statements that move runs and report here (the integrator's list when they change):
// - startRuns (runs.ts): INSERT, null -> pending;
// - endRuns (exit-rules/end-runs.ts): unenroll and exit rules, active -> cancelled;
// - changeRunStatus (run-transitions.ts): pause, resume, runs.transition;
// - the engine's record (engine/record-batch.ts, BatchWrites.write) and the webhook step's
//   begin (engine/webhook-step.ts), from the statuses lockClaimedRuns read;
// - deleteContact (contacts/contact-operations.ts), through countRunsDeletedWithContact: the
//   cascade, status -> null.

export const STATUS_SHARDS = 16;

type Move = readonly [from: RunStatus | null, to: RunStatus | null];

const pending = new WeakMap<Transaction, Map<RunStatus, number>>();

// Runs moved from one status to another (null: created, or deleted), in this transaction.
export function countRunMoves(db: Database, transaction: Transaction, moves: Iterable<Move>): void {
  let deltas = pending.get(transaction);
  const first = !deltas;
  deltas ??= new Map();
  let changed = false;
  for (const [from, to] of moves) {
    if (from === to) continue;
    if (from) deltas.set(from, (deltas.get(from) ?? 0) - 1);
    if (to) deltas.set(to, (deltas.get(to) ?? 0) + 1);
    changed = true;
  }
  if (!first || !changed) return;
  pending.set(transaction, deltas);
  onBeforeCommit(transaction, () => writeDeltas(db, transaction, deltas));
}

async function writeDeltas(db: Database, transaction: Transaction, deltas: Map<RunStatus, number>): Promise<void> {
  const rows = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => (a < b ? -1 : 1));
  if (rows.length === 0) return;
  // SQLite has one writer at a time: one shard does.
  const shard = db.dialect === 'sqlite' ? 0 : Math.floor(Math.random() * STATUS_SHARDS);
  const onConflict =
    db.dialect === 'sqlite' ? 'ON CONFLICT (status, shard) DO UPDATE SET runs = runs + excluded.runs' : 'ON DUPLICATE KEY UPDATE runs = runs + VALUES(runs)';
  await execute(
    db,
    `INSERT INTO run_status_counts (status, shard, runs) VALUES ${rows.map(() => '(?, ?, ?)').join(', ')} ${onConflict}`,
    rows.flatMap(([status, delta]) => [status, shard, delta]),
    transaction,
  );
}

// A contact's runs go with it (ON DELETE CASCADE, which no statement of ours sees): counted
// before its DELETE, locked (after the contact, the order every writer of runs takes them in),
// so that none changes status between this read and the cascade.
export async function countRunsDeletedWithContact(db: Database, contactId: string, transaction: Transaction): Promise<void> {
  const runs = await select<{ status: RunStatus }>(db, `SELECT status FROM sequence_runs WHERE contact_id = ?${forUpdate(db)}`, [contactId], transaction);
  countRunMoves(db, transaction, runs.map((run) => [run.status, null] as const));
}

// Runs by status now: the shards summed (at most 16 rows per status, whatever the runs' number).
export async function runStatusCounts(db: Database): Promise<Record<RunStatus, number>> {
  const rows = await select<{ status: string; runs: number | string | null }>(
    db,
    'SELECT status, SUM(runs) AS runs FROM run_status_counts GROUP BY status',
    [],
  );
  const counts = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<RunStatus, number>;
  for (const row of rows) if (row.status in counts) counts[row.status as RunStatus] = Number(row.runs ?? 0);
  return counts;
}
