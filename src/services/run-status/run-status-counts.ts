import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { onBeforeCommit } from '../../db/sql/transaction';
import { ACTIVE_RUN_STATUSES, RUN_STATUSES, type RunStatus } from '../../schemas/statuses';
import { countRunProgress } from '../analytics/progress-counters';
import { CONTACT_DELETED } from '../analytics/reasons';

// Runs by status, and each sequence's active runs, kept as counters instead of counted over
// sequence_runs (db/migrations/20261211000200-create-run-status-counts.js,
// 20261211000500-create-sequence-active-runs.js). Every statement that inserts, deletes or
// changes the status of runs reports its moves here, in its own transaction, with the statuses
// it read under the runs' locks; the moves are summed and written once, just before the
// transaction commits. So the counters commit with the runs, or not at all: exact whatever runs
// concurrently, in any number of processes.
//
// Each transaction adds to one shard of the counters, chosen at random (16 per status, and per
// sequence), so that concurrent writers rarely wait for one another on a counter row; a reader
// sums the shards. The writes come last in the transaction, each in key order: their locks are
// held only for the COMMIT, and two writers on one shard take them in one order.
//
// The statements that move runs and report here (the integrator's list when they change):
// - startRuns (runs.ts): INSERT, null -> pending;
// - endRuns (exit-rules/end-runs.ts): unenroll and exit rules, active -> cancelled;
// - changeRunStatus (run-transitions.ts): pause, resume, runs.transition;
// - the engine's record (engine/record-batch.ts, BatchWrites.moves), a step's begin included
//   (a webhook step queues its send there), from the statuses lockClaimedRuns read;
// - the outbound outcomes (engine/outbound/record-outcomes.ts, OutcomeWrites.moves): a send's
//   answer completes or fails its run, from the statuses lockRunsWithContacts read.
// The other writers of runs keep the status, and report nothing: moveRuns (move-runs.ts), the
// releases (release-runs.ts), the claim and its dead letters (engine/run-queue.ts). Each writer
// takes the run's next state from the one state machine (engine/run-state.ts).
// - deleteContact (contacts/contact-operations.ts), through countRunsDeletedWithContact: the
//   cascade, status -> null.

export const STATUS_SHARDS = 16;

export interface RunMove {
  sequenceId: string;
  // null: the run was created (from), or deleted (to).
  from: RunStatus | null;
  to: RunStatus | null;
}

interface Deltas {
  statuses: Map<RunStatus, number>;
  // Active runs (pending, running, paused) per sequence.
  active: Map<string, number>;
}

const pending = new WeakMap<Transaction, Deltas>();
const isActive = (status: RunStatus | null) => status !== null && (ACTIVE_RUN_STATUSES as readonly string[]).includes(status);

// Runs moved from one status to another, in this transaction.
export function countRunMoves(db: Database, transaction: Transaction, moves: Iterable<RunMove>): void {
  let deltas = pending.get(transaction);
  const first = !deltas;
  deltas ??= { statuses: new Map(), active: new Map() };
  let changed = false;
  for (const { sequenceId, from, to } of moves) {
    if (from === to) continue;
    if (from) deltas.statuses.set(from, (deltas.statuses.get(from) ?? 0) - 1);
    if (to) deltas.statuses.set(to, (deltas.statuses.get(to) ?? 0) + 1);
    const active = Number(isActive(to)) - Number(isActive(from));
    if (active !== 0) deltas.active.set(sequenceId, (deltas.active.get(sequenceId) ?? 0) + active);
    changed = true;
  }
  if (!first || !changed) return;
  pending.set(transaction, deltas);
  onBeforeCommit(transaction, () => writeDeltas(db, transaction, deltas));
}

async function writeDeltas(db: Database, transaction: Transaction, deltas: Deltas): Promise<void> {
  // SQLite has one writer at a time: one shard does.
  const shard = db.dialect === 'sqlite' ? 0 : Math.floor(Math.random() * STATUS_SHARDS);
  await addTo(db, transaction, 'run_status_counts', 'status', shard, deltas.statuses);
  await addTo(db, transaction, 'sequence_active_runs', 'sequence_id', shard, deltas.active);
}

async function addTo(db: Database, transaction: Transaction, table: string, key: string, shard: number, deltas: Map<string, number>): Promise<void> {
  const rows = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => (a < b ? -1 : 1));
  if (rows.length === 0) return;
  const onConflict =
    db.dialect === 'sqlite' ? `ON CONFLICT (${key}, shard) DO UPDATE SET runs = runs + excluded.runs` : 'ON DUPLICATE KEY UPDATE runs = runs + VALUES(runs)';
  await execute(
    db,
    `INSERT INTO ${table} (${key}, shard, runs) VALUES ${rows.map(() => '(?, ?, ?)').join(', ')} ${onConflict}`,
    rows.flatMap(([value, delta]) => [value, shard, delta]),
    transaction,
  );
}

// A contact's runs go with it (ON DELETE CASCADE, which no statement of ours sees): counted
// before its DELETE, locked (after the contact, the order every writer of runs takes them in),
// so that none changes status between this read and the cascade.
export async function countRunsDeletedWithContact(db: Database, contactId: string, transaction: Transaction): Promise<void> {
  const runs = await select<{ sequence_id: string; status: RunStatus; current_step_id: string | null }>(
    db,
    `SELECT sequence_id, status, current_step_id FROM sequence_runs WHERE contact_id = ?${forUpdate(db)}`,
    [contactId],
    transaction,
  );
  countRunMoves(db, transaction, runs.map((run) => ({ sequenceId: run.sequence_id, from: run.status, to: null })));
  // Its active runs end with it, for the analytics counters: an exit, and a skip of their step.
  const active = runs.filter((run) => isActive(run.status));
  countRunProgress(db, transaction, new Date(), active.map((run) => ({ sequenceId: run.sequence_id, from: run.current_step_id, to: null, ended: { status: 'cancelled' as const, reason: CONTACT_DELETED } })));
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

// Each sequence's active runs (pending, running, paused) now: at most 16 rows per sequence.
export async function activeRunsBySequence(db: Database, sequenceIds: readonly string[]): Promise<Map<string, number>> {
  if (sequenceIds.length === 0) return new Map();
  const rows = await select<{ sequence_id: string; runs: number | string | null }>(
    db,
    'SELECT sequence_id, SUM(runs) AS runs FROM sequence_active_runs WHERE sequence_id IN (?) GROUP BY sequence_id',
    [sequenceIds],
  );
  return new Map(rows.map((row) => [row.sequence_id, Number(row.runs ?? 0)]));
}
