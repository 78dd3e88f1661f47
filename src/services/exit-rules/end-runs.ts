import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import type { RunStatus } from '../../schemas/statuses';
import { cancelSends } from '../runs/outbox';
import { endState, runChangeSql } from '../runs/run-state';
import { countRunMoves } from '../run-status/run-status-counts';
import { countRunProgress } from '../analytics/progress-counters';

// Ends active runs in one statement, as the run's state machine says an active run ends
// (src/services/runs/run-state.ts): nothing is due for them any more, a claim on them is void,
// an execution left running (a wait) is recorded as skipped, and a send not started is
// cancelled (one under way may finish; docs/sequences.md), and a wait_for's wait is deleted. Only a run at a step can have an
// execution or a send: runs of a sequence without steps cost no further statement. The caller
// holds the runs' locks (after their contacts'); each run's status is the one it read under
// them (for the status counters).
export async function endRuns(
  db: Database,
  runs: ReadonlyArray<{ id: string; sequenceId: string; currentStepId: string | null; status: RunStatus }>,
  end: { status: 'cancelled' | 'failed' | 'completed'; reason: string | null; at: Date },
  transaction: Transaction,
): Promise<void> {
  if (runs.length === 0) return;
  const runIds = runs.map((run) => run.id);
  const atStep = runs.filter((run) => run.currentStepId !== null).map((run) => run.id);
  if (atStep.length > 0) {
    await skipRunningExecutions(db, atStep, `run ${end.status}${end.reason ? `: ${end.reason}` : ''}`, end.at, transaction);
    await cancelSends(db, atStep, end.at, transaction);
    // A wait_for's row goes with its run (a later activity would find it stale anyway).
    await execute(db, 'DELETE FROM run_waits WHERE run_id IN (?)', [atStep], transaction);
  }
  const { set, values } = runChangeSql(endState(end, end.at), end.at);
  await execute(db, `UPDATE sequence_runs SET ${set} WHERE id IN (?) AND status IN ('pending', 'running', 'paused')`, [...values, runIds], transaction);
  countRunMoves(db, transaction, runs.map((run) => ({ sequenceId: run.sequenceId, from: run.status, to: end.status })));
  countRunProgress(db, transaction, end.at, runs.map((run) => ({ sequenceId: run.sequenceId, from: run.currentStepId, to: null, ended: { status: end.status, reason: end.reason } })));
}

// An execution a run had under way (a wait that was waiting) ends with the run: skipped, why.
export async function skipRunningExecutions(
  db: Database,
  runIds: readonly string[],
  reason: string,
  at: Date,
  transaction: Transaction,
): Promise<void> {
  await execute(
    db,
    `UPDATE run_step_executions SET status = 'skipped', reason = ?, finished_at = ? WHERE run_id IN (?) AND status = 'running'`,
    [reason, at, runIds],
    transaction,
  );
}
