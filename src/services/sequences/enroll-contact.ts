import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import type { ContactFields } from '../../schemas/contact';
import type { NewEventOf } from '../../schemas/event';
import type { EnrollOutcome } from '../../schemas/sequence';
import { upsertContacts } from '../contacts/upsert-contacts';
import { matchingExitRule } from '../exit-rules/exit-rules';
import { recordEvents } from '../events/record-events';
import { onceForKey, type IdempotencyScope } from '../idempotency/key-in-transaction';
import { requireSequenceRow } from './find-sequence';
import type { RequiredSequence } from '../runs/required-sequence';
import { notifyDueWork } from '../runs/due-work';
import { contactsWithActiveRun, remainingRunCapacity, runsCreatedEvents, startRuns } from '../runs/runs';

// Trigger and enroll-by-email: upsert a contact by email and enroll it, in one transaction
// (docs/decisions.md "Trigger and enroll-by-email"). The contact upsert stands whatever the outcome,
// and so do its events. A contact that, once upserted, meets one of the sequence's exit rules is
// not enrolled (exit_rule_met). With an Idempotency-Key, its outcome commits with the run
// (docs/idempotency.md "Exactly once").
export async function enrollContact(
  db: Database,
  input: { accountId: string; sequenceId: string; contact: ContactFields; idempotency?: IdempotencyScope },
): Promise<EnrollOutcome> {
  const { accountId } = input;
  const outcome = await withTransaction(db, (transaction) => onceForKey(db, input.idempotency, transaction, async () => {
    const sequence = await requireSequenceRow(db, { ...input, mustBeActive: true }, transaction);
    // Locks in the order every enrollment takes them: the sequence (shared), the account's run
    // limit (limited accounts only), then the contact.
    const capacity = await remainingRunCapacity(db, accountId, transaction);
    const upserted = await upsertContacts(db, accountId, [input.contact], transaction);
    const contactId = upserted.results[0].contact.id;
    const meetsExitRule = matchingExitRule(sequence.exitWhen, upserted.results[0].contact) !== null;
    const { outcome, events } = await startRun(db, { accountId, sequence, contactId, capacity, meetsExitRule }, transaction);
    await recordEvents(db, accountId, [...upserted.events, ...events], transaction);
    return { outcome, due: outcome.enrolled && sequence.firstStepId !== null };
  }));
  if (outcome.due) notifyDueWork();
  return outcome.outcome;
}

async function startRun(
  db: Database,
  input: {
    accountId: string;
    sequence: RequiredSequence;
    contactId: string;
    capacity: { remaining: number; limit: number } | null;
    meetsExitRule: boolean;
  },
  transaction: Transaction,
): Promise<{ outcome: EnrollOutcome; events: NewEventOf[] }> {
  const { accountId, sequence, contactId, capacity } = input;
  const sequenceId = sequence.id;
  const active = await contactsWithActiveRun(db, sequenceId, [contactId], transaction);
  if (active.has(contactId)) return { outcome: { enrolled: false, reason: 'active_run_exists', contactId }, events: [] };
  // Its run would be cancelled before its first step: none is started, and it takes no room
  // under the account's limit.
  if (input.meetsExitRule) return { outcome: { enrolled: false, reason: 'exit_rule_met', contactId }, events: [] };
  if (capacity && capacity.remaining === 0) {
    return {
      outcome: {
        enrolled: false,
        reason: 'sequence_limit_reached',
        message: `The account has reached its limit of active runs (${capacity.limit})`,
        contactId,
      },
      events: [],
    };
  }
  const started = await startRuns(db, { accountId, sequence, contactIds: [contactId] }, transaction);
  const run = started.get(contactId);
  // No run: a concurrent request enrolled this contact first; the unique index said so.
  if (!run) return { outcome: { enrolled: false, reason: 'active_run_exists', contactId }, events: [] };
  return { outcome: { enrolled: true, contactId, runId: run.id }, events: runsCreatedEvents(sequenceId, started) };
}
