import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import { nextRunState, runChangeSql } from '../engine/run-state';

// While its sequence is not active, a run does not act: the engine, finding it due, sets it
// aside (due_at NULL, src/services/engine/run-queue.ts) instead of polling it. Setting the
// sequence active again makes those runs due now, in one statement. A run of a sequence with
// steps is otherwise active with nothing due only while it waits for its step's send (the
// outbox holds that): woken too, the engine finds the send and leaves it be, or queues it again
// if it was held. So "active, with a step, due_at NULL" is exactly the set-aside ones, and
// those waiting on a send (a paused run is `paused`, with its due time kept apart).
// What waking makes of a run is the state machine's (src/services/engine/run-state.ts).
export async function unparkRuns(db: Database, sequenceId: string, transaction: Transaction): Promise<number> {
  const now = new Date();
  const { set, values } = runChangeSql(nextRunState({ status: 'running' }, { kind: 'wake' }, now), now);
  return execute(
    db,
    `UPDATE sequence_runs SET ${set} WHERE sequence_id = ? AND status IN ('pending', 'running')
       AND current_step_id IS NOT NULL AND due_at IS NULL`,
    [...values, sequenceId],
    transaction,
  );
}

// A new sending window applies at once: runs held for the old one's opening (a step not begun,
// due later, not claimed) are due now, and held again only if the new window is closed.
export async function releaseHeldRuns(db: Database, sequenceId: string, transaction: Transaction): Promise<number> {
  const now = new Date();
  const { set, values } = runChangeSql(nextRunState({ status: 'running' }, { kind: 'wake' }, now), now);
  return execute(
    db,
    `UPDATE sequence_runs SET ${set} WHERE sequence_id = ? AND status IN ('pending', 'running')
       AND current_step_id IS NOT NULL AND step_started_at IS NULL AND claim_token IS NULL AND due_at > ?`,
    [...values, sequenceId, now],
    transaction,
  );
}
