import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import type { RunStatus } from '../../schemas/statuses';
import type { RunDto } from '../../schemas/sequence';
import { lockContactsById } from '../contacts/lock-contacts';
import { runStatusChangedEvent } from '../events/run-events';
import { recordEvents } from '../events/record-events';
import { normalizeId } from '../ids';
import { isActive, RUN_SELECT, runFromRow, type RunRow } from './runs';

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

export function moveRun(
  db: Database,
  input: { accountId: string; runId: string; status: RunStatus },
): Promise<RunDto> {
  const id = normalizeId(input.runId);
  if (!id) return Promise.reject(new NotFoundError('Run'));
  return withTransaction(db, async (transaction) => {
    // The run's contact is locked before the run, the order every writer of runs follows
    // (docs/idempotency.md "Concurrency and retries"). A move out of the active statuses rewrites the run's
    // entry in the one-active-run index, which carries the run's foreign key: MySQL checks
    // the key again and share-locks the contact. Holding the run, that lock would wait for an
    // unenroll holding the contact and waiting for the run.
    // (A run's contact and sequence never change: read here, they hold under the lock.)
    const [owner] = await select<{ contact_id: string; sequence_id: string }>(
      db,
      'SELECT contact_id, sequence_id FROM sequence_runs WHERE id = ? AND account_id = ?',
      [id, input.accountId],
      transaction,
    );
    if (!owner) throw new NotFoundError('Run');
    await lockContactsById(db, input.accountId, [owner.contact_id], transaction);
    const [run] = await select<RunRow>(db, `${RUN_SELECT} WHERE id = ?${forUpdate(db)}`, [id], transaction);
    if (!run) throw new NotFoundError('Run');
    const from = run.status as RunStatus;
    if (!canMove(from, input.status)) throw new ConflictError(`A run cannot move from ${from} to ${input.status}`, 'invalid_run_transition');
    const now = new Date();
    const completedAt = isActive(input.status) ? null : now;
    await execute(
      db,
      'UPDATE sequence_runs SET status = ?, completed_at = ?, updated_at = ? WHERE id = ?',
      [input.status, completedAt, now, run.id],
      transaction,
    );
    const moved = runFromRow({ ...run, status: input.status, completed_at: completedAt });
    await recordEvents(db, transaction, input.accountId, [
      runStatusChangedEvent(moved, owner.sequence_id, run.contact_id, from),
    ]);
    return moved;
  });
}
