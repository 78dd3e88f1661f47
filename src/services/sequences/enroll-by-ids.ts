import type { Database } from '../../db/database';
import { insertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { EnrollmentDto } from '../../schemas/sequence';
import { lockContactsById } from '../contacts/lock-contacts';
import { requireSequence } from './find-sequence';
import { recordEvents } from '../events/record-events';
import { contactsWithActiveRun, remainingRunCapacity, runsCreatedEvents, startRuns } from './runs';
import { newRowId } from '../ids';

const ENROLLMENT_COLUMNS = [
  'id',
  'account_id',
  'sequence_id',
  'status',
  'total_contacts',
  'successful_enrollments',
  'failed_enrollments',
  'skipped_duplicates',
  'created_at',
  'updated_at',
];

export interface EnrollByIdsResult {
  enrollment: EnrollmentDto;
  summary: { processed: number; successful: number; failed: number; skipped: number };
}

// Enrolls existing contacts by id, set-based: the statements do not grow with the ids.
// failed: not a contact of the account, or over the account's active-run limit.
// skipped: already has an active run in the sequence (found first, or lost to a concurrent
// enroll at insert time).
export function enrollByIds(
  db: Database,
  input: { accountId: string; sequenceId: string; contactIds: string[] },
): Promise<EnrollByIdsResult> {
  const { accountId } = input;
  const ids = [...new Set(input.contactIds.map((id) => id.toLowerCase()))];
  return withTransaction(db, async (transaction) => {
    const sequenceId = await requireSequence(db, { ...input, mustBeActive: true }, transaction);
    const capacity = await remainingRunCapacity(db, accountId, transaction);

    // Locked, in email order: a contact deleted between this read and its run's insert would
    // break the run's foreign key, and a concurrent unenroll or enroll of the same contact waits.
    const existing = await lockContactsById(db, accountId, ids, transaction);
    const active = await contactsWithActiveRun(db, sequenceId, [...existing], transaction);
    const candidates = ids.filter((id) => existing.has(id) && !active.has(id));
    const allowed = capacity ? candidates.slice(0, capacity.remaining) : candidates;

    const started = await startRuns(db, { accountId, sequenceId, contactIds: allowed }, transaction);
    const successful = started.size;
    const failed = ids.length - existing.size + (candidates.length - allowed.length);
    const skipped = ids.length - successful - failed;

    const enrollment: EnrollmentDto = {
      id: newRowId(),
      sequenceId,
      status: 'completed',
      totalContacts: ids.length,
      successfulEnrollments: successful,
      failedEnrollments: failed,
      skippedDuplicates: skipped,
    };
    const now = new Date();
    await insertRows(
      db,
      'enrollments',
      ENROLLMENT_COLUMNS,
      [[enrollment.id, accountId, sequenceId, enrollment.status, ids.length, successful, failed, skipped, now, now]],
      transaction,
    );
    await recordEvents(db, transaction, accountId, runsCreatedEvents(sequenceId, started));
    return { enrollment, summary: { processed: ids.length, successful, failed, skipped } };
  });
}
