import type { Database } from '../../db/database';
import { forUpdate, select } from '../../db/sql/statements';
import { endRuns } from '../exit-rules/end-runs';
import { withTransaction } from '../../db/sql/transaction';
import type { RunStatus } from '../../schemas/statuses';
import { lockContactsById } from '../contacts/lock-contacts';
import { runStatusChangedEvent } from '../events/run-events';
import { recordEvents } from '../events/record-events';
import { requireSequence } from './find-sequence';
import { activeRun, RUN_SELECT, runFromRow, type RunRow } from '../runs/runs';
import { onceForKey, type IdempotencyScope } from '../idempotency/key-in-transaction';

const UNENROLLED = 'unenrolled';

// Cancels every active run of the given contacts in the sequence, whatever the sequence's
// status. Lists the contacts whose run was cancelled, in request order; others are skipped.
// With an Idempotency-Key, the answer commits with the cancellations.
export function unenroll(
  db: Database,
  input: { accountId: string; sequenceId: string; contactIds: string[]; idempotency?: IdempotencyScope },
): Promise<{ cancelled: number; contactIds: string[] }> {
  const ids = [...new Set(input.contactIds.map((id) => id.toLowerCase()))];
  return withTransaction(db, (transaction) => onceForKey(db, input.idempotency, transaction, async () => {
    const sequenceId = await requireSequence(db, { ...input, mustBeActive: false }, transaction);
    // The contacts first, in email order, then their runs: the order every writer of runs
    // takes them in. (Cancelling a run rewrites its entry in the one-active-run index, which
    // carries the run's foreign key, so MySQL checks the key again and share-locks the
    // contact: without the lock taken here, that would happen in run id order.)
    const contacts = await lockContactsById(db, input.accountId, ids, transaction);
    if (contacts.size === 0) return { cancelled: 0, contactIds: [] };
    const runs = await select<RunRow>(
      db,
      // Through the one-active-run index (contact first): it visits only these contacts' runs.
      // A sequence's own indexes would lock its runs of other contacts on the way.
      `${RUN_SELECT}${db.dialect === 'sqlite' ? '' : ' FORCE INDEX (sequence_runs_one_active)'}
        WHERE sequence_id = ? AND account_id = ? AND contact_id IN (?) AND ${activeRun(db)}${forUpdate(db)}`,
      [sequenceId, input.accountId, [...contacts]],
      transaction,
    );
    if (runs.length > 0) {
      const now = new Date();
      await endRuns(
        db,
        runs.map((run) => ({ id: run.id, sequenceId, currentStepId: run.current_step_id, status: run.status as RunStatus })),
        { status: 'cancelled', reason: UNENROLLED, at: now },
        transaction,
      );
      const events = [...runs]
        .sort((a, b) => (a.contact_id < b.contact_id ? -1 : 1))
        .map((run) =>
          runStatusChangedEvent(
            runFromRow({ ...run, status: 'cancelled', completed_at: now, reason: UNENROLLED }),
            sequenceId,
            run.contact_id,
            run.status as RunStatus,
          ),
        );
      await recordEvents(db, input.accountId, events, transaction);
    }
    const cancelled = new Set(runs.map((run) => run.contact_id));
    const contactIds = ids.filter((id) => cancelled.has(id));
    return { cancelled: contactIds.length, contactIds };
  }));
}
