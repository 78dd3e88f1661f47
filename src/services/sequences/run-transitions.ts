import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import type { RunStatus } from '../../schemas/statuses';
import type { RunDto } from '../../schemas/sequence';
import { lockContactsById } from '../contacts/lock-contacts';
import { skipRunningExecutions } from '../exit-rules/end-runs';
import { notifyDueWork } from '../engine/due-work';
import { runStatusChangedEvent } from '../events/run-events';
import { recordEvents } from '../events/record-events';
import { normalizeId } from '../ids';
import { isActive, RUN_COLUMNS_READ, runFromRow, type RunRow } from './runs';
import { countRunMoves } from '../run-status/run-status-counts';

// The moves the sequence runner may make (docs/decisions.md "Runs"). Anything else is a 409.
const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running', 'cancelled', 'failed'],
  running: ['paused', 'completed', 'failed', 'cancelled'],
  paused: ['running', 'cancelled', 'failed'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function canMove(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

// runs.transition: the internal runner's move.
export function moveRun(db: Database, input: { accountId: string; runId: string; status: RunStatus }): Promise<RunDto> {
  return changeRunStatus(db, input, (from) => {
    if (!canMove(from, input.status)) throw new ConflictError(`A run cannot move from ${from} to ${input.status}`, 'invalid_run_transition');
    return input.status;
  });
}

// POST /sequences/{id}/runs/{runId}/pause: a pending or running run stops acting where it is.
export function pauseRun(db: Database, input: { accountId: string; sequenceId: string; runId: string }): Promise<RunDto> {
  return changeRunStatus(db, input, (from) => {
    if (from !== 'pending' && from !== 'running') throw new ConflictError(`A ${from} run cannot be paused`, 'invalid_run_transition');
    return 'paused';
  });
}

// .../resume: a paused run carries on where it stopped, in the status it was paused from.
export function resumeRun(db: Database, input: { accountId: string; sequenceId: string; runId: string }): Promise<RunDto> {
  return changeRunStatus(db, input, (from, row) => {
    if (from !== 'paused') throw new ConflictError(`A ${from} run cannot be resumed: only a paused one`, 'invalid_run_transition');
    return row.paused_from === 'pending' ? 'pending' : 'running';
  });
}

interface LockedRun extends RunRow {
  sequence_id: string;
  due_at: unknown;
  paused_due_at: unknown;
  paused_from: string | null;
  claim_token: string | null;
}

async function changeRunStatus(
  db: Database,
  input: { accountId: string; runId: string; sequenceId?: string },
  decide: (from: RunStatus, row: LockedRun) => RunStatus,
): Promise<RunDto> {
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
    // (docs/idempotency.md "Concurrency and retries"). A move out of the active statuses rewrites the run's
    // entry in the one-active-run index, which carries the run's foreign key: MySQL checks
    // the key again and share-locks the contact. Holding the run, that lock would wait for an
    // unenroll holding the contact and waiting for the run.
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
      `SELECT ${RUN_COLUMNS_READ}, sequence_id, due_at, paused_due_at, paused_from, claim_token FROM sequence_runs WHERE id = ?${forUpdate(db)}`,
      [id],
      transaction,
    );
    if (!run) throw new NotFoundError('Run');
    const from = run.status as RunStatus;
    const to = decide(from, run);
    const now = new Date();
    const completedAt = isActive(to) ? null : now;
    const due = dueColumns(run, from, to, now);
    await execute(
      db,
      `UPDATE sequence_runs SET status = ?, completed_at = ?, updated_at = ?, due_at = ?, paused_due_at = ?, paused_from = ?,
         claim_token = CASE WHEN ? THEN claim_token ELSE NULL END WHERE id = ?`,
      [to, completedAt, now, due.dueAt, due.pausedDueAt, due.pausedFrom, due.keepClaim, run.id],
      transaction,
    );
    countRunMoves(db, transaction, [{ sequenceId: owner.sequence_id, from, to }]);
    if (!isActive(to)) {
      // An execution left running (a wait) ends with the run.
      await skipRunningExecutions(db, [run.id], `run ${to}`, now, transaction);
    }
    const moved = runFromRow({ ...run, status: to, completed_at: completedAt });
    await recordEvents(db, input.accountId, [runStatusChangedEvent(moved, owner.sequence_id, run.contact_id, from)], transaction);
    return { moved, due: due.dueAt !== null };
  });
  if (outcome.due) notifyDueWork();
  return outcome.moved;
}

// What a status change does to the engine's hold on the run: pausing keeps its due time apart
// (due_at NULL: nothing claims it) and voids a claim in progress; resuming gives the due time
// back (now, if it has passed); ending clears both. A run without steps has none of these.
function dueColumns(run: LockedRun, from: RunStatus, to: RunStatus, now: Date) {
  const dueAt = run.due_at === null || run.due_at === undefined ? null : toDate(run.due_at);
  const pausedDueAt = run.paused_due_at === null || run.paused_due_at === undefined ? null : toDate(run.paused_due_at);
  if (!isActive(to)) return { dueAt: null, pausedDueAt: null, pausedFrom: null, keepClaim: false };
  // A claimed run's due_at is its lease's end: the step it was taking is due again at resume.
  if (to === 'paused') return { dueAt: null, pausedDueAt: run.claim_token ? now : dueAt, pausedFrom: from, keepClaim: false };
  if (from === 'paused') {
    const resumeAt = run.current_step_id === null ? null : pausedDueAt && pausedDueAt > now ? pausedDueAt : now;
    return { dueAt: resumeAt, pausedDueAt: null, pausedFrom: null, keepClaim: false };
  }
  return { dueAt, pausedDueAt, pausedFrom: run.paused_from, keepClaim: true };
}
