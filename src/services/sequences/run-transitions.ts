import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError } from '../../errors/app-errors';
import type { RunStatus } from '../../schemas/statuses';
import type { RunDto } from '../../schemas/sequence';
import { lockContactsById } from '../contacts/lock-contacts';
import { skipRunningExecutions } from '../exit-rules/end-runs';
import { notifyDueWork } from '../runs/due-work';
import { cancelSends, holdSends } from '../runs/outbox';
import { isActiveStatus, nextRunState, runChangeSql, type RunInput } from '../runs/run-state';
import { runStatusChangedEvent } from '../events/run-events';
import { recordEvents } from '../events/record-events';
import { normalizeId } from '../ids';
import { RUN_COLUMNS_READ, runFromRow, type RunRow } from '../runs/runs';
import { countRunMoves } from '../run-status/run-status-counts';
import { countRunProgress } from '../analytics/progress-counters';
import { progressOfChange } from '../analytics/run-change-progress';

// One run's status changed from outside the engine: the internal runner's transition, pause and
// resume. What each does to the run is the state machine's (src/services/runs/run-state.ts);
// here it is locked, written and told.

// runs.transition: the internal runner's move (docs/decisions.md "Runs"); anything else is a 409.
export function moveRun(db: Database, input: { accountId: string; runId: string; status: RunStatus }): Promise<RunDto> {
  return changeRunStatus(db, input, { kind: 'transition', to: input.status });
}

// POST /sequences/{id}/runs/{runId}/pause: a pending or running run stops acting where it is. A
// send of its step that has not started waits for the resume; one already under way finishes
// (docs/sequences.md "Pausing one run").
export function pauseRun(db: Database, input: { accountId: string; sequenceId: string; runId: string }): Promise<RunDto> {
  return changeRunStatus(db, input, { kind: 'pause' });
}

// .../resume: a paused run carries on where it stopped, in the status it was paused from.
export function resumeRun(db: Database, input: { accountId: string; sequenceId: string; runId: string }): Promise<RunDto> {
  return changeRunStatus(db, input, { kind: 'resume' });
}

interface LockedRun extends RunRow {
  sequence_id: string;
  due_at: unknown;
  paused_due_at: unknown;
  paused_from: RunStatus | null;
  step_started_at: unknown;
  claim_token: string | null;
}

const date = (value: unknown): Date | null => (value === null || value === undefined ? null : toDate(value));

async function changeRunStatus(db: Database, input: { accountId: string; runId: string; sequenceId?: string }, runInput: RunInput): Promise<RunDto> {
  const id = normalizeId(input.runId);
  const sequenceId = input.sequenceId === undefined ? undefined : normalizeId(input.sequenceId);
  if (sequenceId === null) throw new NotFoundError('Sequence');
  if (!id) throw new NotFoundError('Run');
  const outcome = await withTransaction(db, async (transaction) => {
    if (sequenceId) {
      const [sequence] = await select<{ id: string }>(db, 'SELECT id FROM sequences WHERE id = ? AND account_id = ?', [sequenceId, input.accountId], transaction);
      if (!sequence) throw new NotFoundError('Sequence');
    }
    // The run's contact is locked before the run, the order every writer of runs follows
    // (docs/architecture.md "One lock order"), and the run's sends after it. A move out of the
    // active statuses rewrites the run's entry in the one-active-run index, which carries the
    // run's foreign key: MySQL checks the key again and share-locks the contact. Holding the
    // run, that lock would wait for an unenroll holding the contact and waiting for the run.
    // (A run's contact and sequence never change: read here, they hold under the lock.)
    const [owner] = await select<{ contact_id: string; sequence_id: string }>(
      db,
      `SELECT contact_id, sequence_id FROM sequence_runs WHERE id = ? AND account_id = ?${sequenceId ? ' AND sequence_id = ?' : ''}`,
      sequenceId ? [id, input.accountId, sequenceId] : [id, input.accountId],
      transaction,
    );
    if (!owner) throw new NotFoundError('Run');
    await lockContactsById(db, input.accountId, [owner.contact_id], transaction);
    const [run] = await select<LockedRun>(
      db,
      `SELECT ${RUN_COLUMNS_READ}, sequence_id, due_at, paused_due_at, paused_from, step_started_at, claim_token FROM sequence_runs WHERE id = ?${forUpdate(db)}`,
      [id],
      transaction,
    );
    if (!run) throw new NotFoundError('Run');
    const now = new Date();
    const change = nextRunState(
      {
        status: run.status as RunStatus,
        currentStepId: run.current_step_id,
        stepStartedAt: date(run.step_started_at),
        dueAt: date(run.due_at),
        pausedDueAt: date(run.paused_due_at),
        pausedFrom: run.paused_from,
        claimed: run.claim_token !== null,
      },
      runInput,
      now,
    );
    const update = runChangeSql(change, now);
    await execute(db, `UPDATE sequence_runs SET ${update.set} WHERE id = ?`, [...update.values, run.id], transaction);
    countRunMoves(db, transaction, [{ sequenceId: owner.sequence_id, from: change.from, to: change.to }]);
    countRunProgress(db, transaction, now, [progressOfChange(owner.sequence_id, run.current_step_id, runInput, change)]);
    const { set } = change;
    if (!isActiveStatus(change.to)) {
      // An execution left running (a wait) ends with the run; a send not started never will.
      await skipRunningExecutions(db, [run.id], `run ${change.to}`, now, transaction);
      await cancelSends(db, [run.id], now, transaction);
    } else if (change.to === 'paused') {
      await holdSends(db, [run.id], now, transaction);
    }
    const moved = runFromRow({ ...run, status: change.to, completed_at: set.completedAt !== undefined ? set.completedAt : run.completed_at });
    await recordEvents(db, input.accountId, [runStatusChangedEvent(moved, owner.sequence_id, run.contact_id, change.from)], transaction);
    return { moved, due: set.dueAt !== undefined && set.dueAt !== null };
  });
  if (outcome.due) notifyDueWork();
  return outcome.moved;
}
