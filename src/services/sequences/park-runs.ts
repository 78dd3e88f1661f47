import { EventEmitter } from 'node:events';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { upsertRows } from '../../db/sql/statements';

// While its sequence is not active, a run does not act: the engine, finding it due, sets it
// aside (due_at NULL, src/services/engine/run-queue.ts) instead of polling it. Setting the
// sequence active again makes those runs due; so does a new sending window for the runs held
// until the old one's opening. A sequence may have millions of them: the change only records
// the release here, in its own transaction, and a maintenance task in every process makes the
// runs due a chunk at a time (release-runs.ts), within seconds.
//
// Which runs each kind releases, among the sequence's pending and running runs at a step:
// - unpark: those set aside (due_at NULL). A run of a sequence with steps is otherwise active
//   with nothing due only while it waits for its step's send (the outbox holds that): woken too,
//   the engine finds the send and leaves it be, or queues it again if the claim held it while the
//   sequence was not active (runs/outbox.ts). A paused run is `paused`, its due time
//   kept apart.
// What a release makes of each run is the state machine's `wake` (runs/run-state.ts).
// - window: those held for the window's opening: a step not begun, due after the change, not
//   claimed (a claimed run's due time is its lease).
export type ReleaseKind = 'unpark' | 'window';

export const RELEASE_PREDICATES: Record<ReleaseKind, string> = {
  unpark: 'due_at IS NULL',
  window: 'step_started_at IS NULL AND claim_token IS NULL AND due_at > ?',
};

// Records the release; a release of the same kind still under way starts again from the first
// run (what it released stays released).
export async function requestRelease(
  db: Database,
  input: { accountId: string; sequenceId: string; kind: ReleaseKind; at: Date },
  transaction: Transaction,
): Promise<void> {
  await upsertRows(
    db,
    'sequence_run_releases',
    ['sequence_id', 'kind', 'account_id', 'requested_at', 'position_status', 'position_at', 'position_id', 'updated_at'],
    [[input.sequenceId, input.kind, input.accountId, input.at, 'pending', new Date(0), '', input.at]],
    ['sequence_id', 'kind'],
    ['requested_at', 'position_status', 'position_at', 'position_id', 'updated_at'],
    transaction,
  );
}

// "A release was recorded": what the writer tells the release task of its own process once it
// has committed, so that the runs follow at once rather than at the task's next look. Only a
// nudge: the database holds the work.
const requested = new EventEmitter();
requested.setMaxListeners(0);

export function notifyReleaseRequested(): void {
  requested.emit('release');
}

export function onReleaseRequested(listener: () => void): () => void {
  requested.on('release', listener);
  return () => requested.off('release', listener);
}
