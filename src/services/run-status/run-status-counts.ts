import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { forUpdate, select } from '../../db/sql/statements';
import { catchUpProjection } from '../events/projection/catch-up';
import { addDelta, runLogOf, type RunLogEntry } from '../events/projection/run-log';
import { ACTIVE_RUN_STATUSES, RUN_STATUSES, type RunStatus } from '../../schemas/statuses';
import { countRunProgress } from '../analytics/progress-counters';
import { CONTACT_DELETED } from '../analytics/reasons';

// Runs by status, and each sequence's active runs, kept as counters instead of counted over
// sequence_runs (db/migrations/20261211000200-create-run-status-counts.js,
// 20261211000500-create-sequence-active-runs.js). Every statement that inserts, deletes or
// changes the status of runs reports its moves here, in its own transaction, with the statuses
// it read under the runs' locks; the moves are summed into the transaction's run log row
// (projection/run-log.ts), which commits with the runs or not at all, and the projector adds
// them to the counters exactly once (projection/projector.ts). So the counters are exact as of
// the projection, whatever runs concurrently, in any number of processes; a reader that needs
// them fresh catches the projection up first (projection/catch-up.ts). Older rows are in up to
// 16 shards; the projector (their one writer now) adds to shard 0, and readers sum the shards.
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
// takes the run's next state from the one state machine (runs/run-state.ts).
// - deleteContact (contacts/contact-operations.ts), through countRunsDeletedWithContact: the
//   cascade, status -> null.

export interface RunMove {
  sequenceId: string;
  // null: the run was created (from), or deleted (to).
  from: RunStatus | null;
  to: RunStatus | null;
}

const isActive = (status: RunStatus | null) => status !== null && (ACTIVE_RUN_STATUSES as readonly string[]).includes(status);

// Runs moved from one status to another, in this transaction: into its run log row, for the
// projector to add to the counters.
export function countRunMoves(db: Database, transaction: Transaction, moves: Iterable<RunMove>): void {
  let entry: RunLogEntry | undefined;
  for (const { sequenceId, from, to } of moves) {
    if (from === to) continue;
    entry ??= runLogOf(db, transaction);
    if (from) addDelta(entry.statuses, [from], -1);
    if (to) addDelta(entry.statuses, [to], 1);
    addDelta(entry.active, [sequenceId], Number(isActive(to)) - Number(isActive(from)));
  }
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
  await catchUpProjection(db);
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
  await catchUpProjection(db);
  const rows = await select<{ sequence_id: string; runs: number | string | null }>(
    db,
    'SELECT sequence_id, SUM(runs) AS runs FROM sequence_active_runs WHERE sequence_id IN (?) GROUP BY sequence_id',
    [sequenceIds],
  );
  return new Map(rows.map((row) => [row.sequence_id, Number(row.runs ?? 0)]));
}
