import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { byIndexOrder } from '../../db/sql/key-order';
import { insertIgnoringConflicts, select, upsertRows } from '../../db/sql/statements';
import { type ContactDto, normalizeEmail } from '../../schemas/contact';
import { CONTACT_COLUMNS, CONTACT_SELECT, rowValues, stateFromRow, toContactDto, type ContactRow } from './contact-row';
import { applyUpsert, assertWithinLimits, sameState, type ContactState, type UpsertItem } from './contact-state';
import { syncContactMirrors, type WrittenContact } from './contact-mirrors';
import type { NewEventOf } from '../../schemas/event';
import { contactChangeEvents } from '../events/contact-events';
import { newRowId } from '../ids';
import { cancelRunsOnExit, type ChangedContact } from '../exit-rules/cancel-on-exit';

export interface UpsertOutcome {
  // One per item, in request order: the contact as that item left it.
  results: Array<{ contact: ContactDto; created: boolean }>;
  inserted: number;
  updated: number;
  // One contact.created or contact.updated (and subscription changes) per contact that
  // changed, in email order: for the caller to record as its transaction's last step.
  events: NewEventOf[];
}

export const UPDATED_ON_UPSERT = [
  'phone',
  'first_name',
  'last_name',
  'tags',
  'custom_fields',
  'email_subscription_status',
  'whatsapp_subscription_status',
  'updated_at',
];

// Upserts items by email, set-based: at most three statements whatever the number of items.
//   1. INSERT every email as a new contact, leaving alone those that exist. The database
//      decides who creates a contact, so concurrent upserts of one email create it once. On
//      MySQL this one statement takes every lock the upsert needs: the rows it inserts, and an
//      exclusive lock on each existing one (index entry and row), in email order.
//   2. SELECT the rows, without locking: they are ours already, so this reads what was last
//      committed. A row carrying the id we proposed is one we created. (A locking read here
//      was the deadlock of issue 7: the optimizer may scan the account's whole email range,
//      so it went back to the start of the order and waited for rows of other batches while
//      holding its own.) Skipped when step 1 inserted every email (its count says so): those
//      rows are the ones it wrote, nothing to merge into. That is an import of new contacts.
//   3. Write the merged state of the others in one multi-row upsert (those it changes): rows
//      already locked, so it waits for no one.
// Items with the same email apply in order. Rows are inserted sorted by email, the one order
// every contact writer locks in (docs/idempotency.md "Concurrency and retries"), so concurrent batches
// queue instead of deadlocking.
// Runs inside the caller's transaction, so a limit broken by a merge undoes it all.
export async function upsertContacts(
  db: Database,
  accountId: string,
  items: readonly UpsertItem[],
  transaction: Transaction,
): Promise<UpsertOutcome> {
  const now = new Date();
  const byEmail = groupByEmail(items);
  const emails = [...byEmail.keys()].sort(byIndexOrder);
  const proposedIds = new Map(emails.map((email) => [email, newRowId()]));

  const freshStates = new Map(emails.map((email) => [email, foldItems(null, byEmail.get(email)!)]));
  const insertedRows = await insertIgnoringConflicts(
    db,
    'contacts',
    CONTACT_COLUMNS,
    emails.map((email) => rowValues(proposedIds.get(email)!, accountId, freshStates.get(email)!.final, now, now)),
    transaction,
  );

  // Every email inserted: each row is the one just written, with the id proposed and the state
  // folded from the items, so there is nothing to read back (an import of new contacts).
  const everyCreated = insertedRows === emails.length;
  const rows = everyCreated
    ? []
    : await select<ContactRow>(db, `${CONTACT_SELECT} WHERE account_id = ? AND email_normalized IN (?)`, [accountId, emails], transaction);
  const rowByEmail = new Map(rows.map((row) => [row.email_normalized, row]));
  // Taken now that every lock is held: from here to COMMIT nothing waits, which keeps a change's
  // updated_at close to the moment it becomes visible (the list's sort=updatedAt relies on it).
  const changedAt = new Date();

  const results: UpsertOutcome['results'] = new Array(items.length);
  const toUpdate: unknown[][] = [];
  const written: WrittenContact[] = [];
  const events: NewEventOf[] = [];
  const changedStates: ChangedContact[] = [];
  let inserted = 0;
  for (const email of emails) {
    const row = rowByEmail.get(email);
    if (!everyCreated && !row) throw new Error(`upsert lost the row for an email of account ${accountId}`);
    const id = row?.id ?? proposedIds.get(email)!;
    const created = id === proposedIds.get(email);
    const current = created ? null : stateFromRow(row!);
    const folded = current ? foldItems(current, byEmail.get(email)!) : freshStates.get(email)!;
    const changed = !current || !sameState(current, folded.final);
    const createdAt = created ? now : row!.created_at;
    const updatedAt = created ? now : changed ? changedAt : row!.updated_at;
    if (created) inserted += 1;
    else if (changed) toUpdate.push(rowValues(id, accountId, folded.final, changedAt, changedAt));
    if (changed) {
      const { tags } = folded.final;
      written.push({
        id,
        accountId,
        tags,
        previousTags: current?.tags ?? null,
        // The email is the upsert's key: its normalized form never changes here.
        email,
        previousEmail: current ? email : null,
        createdAt,
        updatedAt: created ? now : changedAt,
      });
    }
    if (changed) events.push(...contactChangeEvents(current, toContactDto(id, folded.final, createdAt, updatedAt)));
    if (changed && current) changedStates.push({ id, before: current, after: folded.final });
    folded.steps.forEach(({ index, state }, step) => {
      assertWithinLimits(state, items.length > 1 ? `contacts.${index}.` : '');
      results[index] = { contact: toContactDto(id, state, createdAt, updatedAt), created: created && step === 0 };
    });
  }

  await upsertRows(
    db,
    'contacts',
    CONTACT_COLUMNS,
    toUpdate,
    ['account_id', 'email_normalized'],
    UPDATED_ON_UPSERT,
    transaction,
  );
  await syncContactMirrors(db, written, transaction);
  // A change that meets a sequence's exit rule cancels its run with it (docs/sequences.md).
  events.push(...(await cancelRunsOnExit(db, accountId, changedStates, transaction)));
  return { results, inserted, updated: items.length - inserted, events };
}

function groupByEmail(items: readonly UpsertItem[]) {
  const byEmail = new Map<string, Array<{ index: number; fields: UpsertItem }>>();
  items.forEach((fields, index) => {
    const email = normalizeEmail(fields.email);
    const group = byEmail.get(email) ?? [];
    group.push({ index, fields });
    byEmail.set(email, group);
  });
  return byEmail;
}

function foldItems(start: ContactState | null, group: Array<{ index: number; fields: UpsertItem }>) {
  const steps: Array<{ index: number; state: ContactState }> = [];
  let state = start;
  for (const { index, fields } of group) {
    state = applyUpsert(state, fields);
    steps.push({ index, state });
  }
  return { steps, final: state! };
}
