import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import type { RunStatus } from '../../schemas/statuses';
import { countRunMoves } from '../run-status/run-status-counts';

// Ends active runs in one statement: nothing is due for them any more, a claim on them is
// void, and an execution left running (a wait) is recorded as skipped. Only a run at a step can
// have one: runs of a sequence without steps cost no second statement. Each run's status is the
// one its caller read under the run's lock (for the status counters).
export async function endRuns(
  db: Database,
  runs: ReadonlyArray<{ id: string; sequenceId: string; currentStepId: string | null; status: RunStatus }>,
  end: { status: 'cancelled' | 'failed' | 'completed'; reason: string | null; at: Date },
  transaction: Transaction,
): Promise<void> {
  if (runs.length === 0) return;
  const runIds = runs.map((run) => run.id);
  const atStep = runs.filter((run) => run.currentStepId !== null).map((run) => run.id);
  if (atStep.length > 0) await skipRunningExecutions(db, atStep, `run ${end.status}${end.reason ? `: ${end.reason}` : ''}`, end.at, transaction);
  await execute(
    db,
    `UPDATE sequence_runs SET status = ?, reason = ?, completed_at = ?, updated_at = ?, due_at = NULL, paused_due_at = NULL,
       claim_token = NULL WHERE id IN (?) AND status IN ('pending', 'running', 'paused')`,
    [end.status, end.reason, end.at, end.at, runIds],
    transaction,
  );
  countRunMoves(db, transaction, runs.map((run) => ({ sequenceId: run.sequenceId, from: run.status, to: end.status })));
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
