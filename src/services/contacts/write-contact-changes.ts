import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, upsertRows } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import { contactChangeEvents } from '../events/contact-events';
import { cancelRunsOnExit, type ChangedContact } from '../exit-rules/cancel-on-exit';
import { CONTACT_COLUMNS, rowValues, toContactDto, type ContactRow } from './contact-row';
import { sameState, type ContactState } from './contact-state';
import { syncContactMirrors, type WrittenContact } from './contact-mirrors';
import { UPDATED_ON_UPSERT } from './upsert-contacts';

export interface ContactChange {
  row: ContactRow;
  before: ContactState;
  after: ContactState;
}

// Writes new states of contacts of one account that the caller has locked (lockContactRows),
// set-based as the upsert writes them: one multi-row statement, the mirrors, the exit rules.
// Answers the events to record, contact changes first. A contact whose state did not change is
// not written. exceptRunIds: runs the caller moves itself (the engine's own step).
export async function writeContactChanges(
  db: Database,
  accountId: string,
  changes: readonly ContactChange[],
  transaction: Transaction,
  exceptRunIds?: ReadonlySet<string>,
): Promise<NewEventOf[]> {
  const changed = changes.filter((change) => !sameState(change.before, change.after));
  if (changed.length === 0) return [];
  const now = new Date();
  const columns = changedColumns(changed);
  if (columns) {
    await updateColumns(db, changed, columns, now, transaction);
  } else {
    await upsertRows(
      db,
      'contacts',
      CONTACT_COLUMNS,
      changed.map(({ row, after }) => rowValues(row.id, accountId, after, toDate(row.created_at), now)),
      ['account_id', 'email_normalized'],
      UPDATED_ON_UPSERT,
      transaction,
    );
  }
  const written: WrittenContact[] = changed.map(({ row, before, after }) => ({
    id: row.id,
    accountId,
    tags: after.tags,
    previousTags: before.tags,
    email: after.emailNormalized,
    previousEmail: before.emailNormalized,
    createdAt: row.created_at,
    updatedAt: now,
  }));
  await syncContactMirrors(db, written, transaction);
  const events = changed.flatMap(({ row, before, after }) => contactChangeEvents(before, toContactDto(row.id, after, row.created_at, now)));
  const exits: ChangedContact[] = changed.map(({ row, before, after }) => ({ id: row.id, before, after }));
  events.push(...(await cancelRunsOnExit(db, accountId, exits, transaction, exceptRunIds)));
  return events;
}

// The columns an UPDATE by id may write instead of the upsert: any but the email (the upsert's
// key). Each is written for the contacts whose value changed, the others keep theirs.
const NARROW: ReadonlyArray<[keyof ContactState, string, (state: ContactState) => unknown]> = [
  ['phone', 'phone', (state) => state.phone],
  ['firstName', 'first_name', (state) => state.firstName],
  ['lastName', 'last_name', (state) => state.lastName],
  ['tags', 'tags', (state) => JSON.stringify(state.tags)],
  ['customFields', 'custom_fields', (state) => JSON.stringify(state.customFields)],
  ['emailSubscriptionStatus', 'email_subscription_status', (state) => state.emailSubscriptionStatus],
  ['whatsappSubscriptionStatus', 'whatsapp_subscription_status', (state) => state.whatsappSubscriptionStatus],
];

// Null when an email changed (the upsert then writes whole rows).
function changedColumns(changed: readonly ContactChange[]): typeof NARROW | null {
  if (changed.some(({ before, after }) => before.email !== after.email || before.emailNormalized !== after.emailNormalized)) return null;
  return NARROW.filter(([, , value]) => changed.some(({ before, after }) => JSON.stringify(value(before)) !== JSON.stringify(value(after))));
}

// A tag step's write: tags and updated_at of the contacts, by their primary key (the caller holds
// their locks), one statement, instead of all 13 columns through the (account, email) index.
async function updateColumns(db: Database, changed: readonly ContactChange[], columns: typeof NARROW, now: Date, transaction: Transaction): Promise<void> {
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const [, name, value] of columns) {
    const differing = changed.filter(({ before, after }) => JSON.stringify(value(before)) !== JSON.stringify(value(after)));
    sets.push(`${name} = CASE id ${differing.map(() => 'WHEN ? THEN ?').join(' ')} ELSE ${name} END`);
    for (const { row, after } of differing) values.push(row.id, value(after));
  }
  sets.push('updated_at = ?');
  values.push(now);
  await execute(db, `UPDATE contacts SET ${sets.join(', ')} WHERE id IN (?)`, [...values, changed.map(({ row }) => row.id)], transaction);
}
