import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { insertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { EnrollFailureReason, EnrollmentDto, EnrollSummary } from '../../schemas/sequence';
import type { ExitRule } from '../../schemas/sequence-definition';
import { stateFromRow } from '../contacts/contact-row';
import { lockContactRows, lockContactsById } from '../contacts/lock-contacts';
import { matchingExitRule } from '../exit-rules/exit-rules';
import { requireSequenceRow } from './find-sequence';
import { notifyDueWork } from '../runs/due-work';
import { recordEvents } from '../events/record-events';
import { contactsWithActiveRun, remainingRunCapacity, runsCreatedEvents, startRuns } from '../runs/runs';
import { newRowId } from '../ids';
import { onceForKey, type IdempotencyScope } from '../idempotency/key-in-transaction';

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
  summary: EnrollSummary;
}

// Enrolls existing contacts by id, set-based: the statements do not grow with the ids.
// failed: not a contact of the account, meeting one of the sequence's exit rules, or over the
// account's active-run limit (each listed in summary.failures with its reason).
// skipped: already has an active run in the sequence (found first, or lost to a concurrent
// enroll at insert time). With an Idempotency-Key, the result commits with the runs and the
// enrollment record (docs/idempotency.md "Exactly once").
export async function enrollByIds(
  db: Database,
  input: { accountId: string; sequenceId: string; contactIds: string[]; idempotency?: IdempotencyScope },
): Promise<EnrollByIdsResult> {
  const { accountId } = input;
  // Ids compare case-insensitively; a failure names the id as the request first spelled it.
  const given = new Map<string, string>();
  for (const id of input.contactIds) if (!given.has(id.toLowerCase())) given.set(id.toLowerCase(), id);
  const ids = [...given.keys()];
  const result = await withTransaction(db, (transaction) => onceForKey(db, input.idempotency, transaction, async () => {
    const { sequenceId, started, existing, active, meetingExitRule, overLimit, events, due } = await enrollInTransaction(db, { accountId, sequenceId: input.sequenceId, ids }, transaction);
    const failures: Array<{ contactId: string; reason: EnrollFailureReason }> = [];
    for (const [id, asGiven] of given) {
      if (!existing.has(id)) failures.push({ contactId: asGiven, reason: 'not_found' });
      else if (active.has(id)) continue;
      else if (meetingExitRule.has(id)) failures.push({ contactId: asGiven, reason: 'exit_rule_met' });
      else if (overLimit.has(id)) failures.push({ contactId: asGiven, reason: 'sequence_limit_reached' });
    }
    const successful = started.size;
    const failed = failures.length;
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
    await recordEvents(db, accountId, events, transaction);
    return { enrollment, summary: { processed: ids.length, successful, failed, skipped, failures }, due };
  }));
  if (result.due) notifyDueWork();
  return { enrollment: result.enrollment, summary: result.summary };
}

// The enrollment itself, in the caller's transaction (an enroll request's, or a contact import's
// batch): the sequence must be active; the contacts among ids are locked, and those not already
// in it, not meeting an exit rule and within the account's limit get a run. Their runs' events
// are the caller's to record, as its transaction's last step; due: the caller calls
// notifyDueWork() once committed.
export async function enrollInTransaction(
  db: Database,
  input: { accountId: string; sequenceId: string; ids: string[] },
  transaction: Transaction,
) {
  const { accountId, ids } = input;
  const sequence = await requireSequenceRow(db, { accountId, sequenceId: input.sequenceId, mustBeActive: true }, transaction);
  const sequenceId = sequence.id;
  const capacity = await remainingRunCapacity(db, accountId, transaction);

  // Locked, in email order: a contact deleted between this read and its run's insert would
  // break the run's foreign key, and a concurrent unenroll or enroll of the same contact waits.
  // With exit rules, the same statement reads what they look at.
  const { existing, meetingExitRule } = await lockContacts(db, accountId, ids, sequence.exitWhen, transaction);
  const active = await contactsWithActiveRun(db, sequenceId, [...existing], transaction);
  // A contact that meets an exit rule gets no run (its run would be cancelled before its first
  // step), and takes no room under the account's limit.
  const candidates = ids.filter((id) => existing.has(id) && !active.has(id) && !meetingExitRule.has(id));
  const allowed = capacity ? candidates.slice(0, capacity.remaining) : candidates;

  const started = await startRuns(db, { accountId, sequence, contactIds: allowed }, transaction);
  const overLimit = new Set(candidates.slice(allowed.length));
  const events = runsCreatedEvents(sequenceId, started);
  return { sequenceId, started, existing, active, meetingExitRule, overLimit, events, due: sequence.firstStepId !== null && started.size > 0 };
}

// The contacts among ids, locked; those that meet one of the exit rules. Without rules, ids only
// are read; with them, the rows, in the same one statement.
async function lockContacts(
  db: Database,
  accountId: string,
  ids: readonly string[],
  exitWhen: readonly ExitRule[],
  transaction: Transaction,
): Promise<{ existing: Set<string>; meetingExitRule: Set<string> }> {
  if (exitWhen.length === 0) return { existing: await lockContactsById(db, accountId, ids, transaction), meetingExitRule: new Set() };
  const rows = await lockContactRows(db, accountId, ids, transaction);
  return {
    existing: new Set(rows.map((row) => row.id)),
    meetingExitRule: new Set(rows.filter((row) => matchingExitRule(exitWhen, stateFromRow(row)) !== null).map((row) => row.id)),
  };
}
