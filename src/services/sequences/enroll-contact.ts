import type { Database } from '../../db/database';
import { withTransaction } from '../../db/transaction';
import type { ContactFields } from '../../schemas/contact';
import type { EnrollOutcome } from '../../schemas/sequence';
import { upsertContacts } from '../contacts/upsert-contacts';
import { requireSequence } from './find-sequence';
import { contactsWithActiveRun, remainingRunCapacity, startRuns } from './runs';

// Trigger and enroll-by-email: upsert a contact by email and enroll it, in one transaction
// (CONTRACT.md "Trigger and enroll-by-email"). The contact upsert stands whatever the outcome.
export function enrollContact(
  db: Database,
  input: { accountId: string; sequenceId: string; contact: ContactFields },
): Promise<EnrollOutcome> {
  const { accountId } = input;
  return withTransaction(db, async (transaction) => {
    const sequenceId = await requireSequence(db, { ...input, mustBeActive: true }, transaction);
    // Locks in the order every enrollment takes them: the sequence (shared), the account's run
    // limit (limited accounts only), then the contact.
    const capacity = await remainingRunCapacity(db, accountId, transaction);
    const { results } = await upsertContacts(db, accountId, [input.contact], transaction);
    const contactId = results[0].contact.id;

    const active = await contactsWithActiveRun(db, sequenceId, [contactId], transaction);
    if (active.has(contactId)) return { enrolled: false, reason: 'active_run_exists', contactId };
    if (capacity && capacity.remaining === 0) {
      return {
        enrolled: false,
        reason: 'sequence_limit_reached',
        message: `The account has reached its limit of active runs (${capacity.limit})`,
        contactId,
      };
    }
    const started = await startRuns(db, { accountId, sequenceId, contactIds: [contactId] }, transaction);
    const runId = started.get(contactId);
    // No run: a concurrent request enrolled this contact first; the unique index said so.
    if (!runId) return { enrolled: false, reason: 'active_run_exists', contactId };
    return { enrolled: true, contactId, runId };
  });
}
