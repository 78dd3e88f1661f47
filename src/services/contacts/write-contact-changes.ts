import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { upsertRows } from '../../db/sql/statements';
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
  await upsertRows(
    db,
    'contacts',
    CONTACT_COLUMNS,
    changed.map(({ row, after }) => rowValues(row.id, accountId, after, toDate(row.created_at), now)),
    ['account_id', 'email_normalized'],
    UPDATED_ON_UPSERT,
    transaction,
  );
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
