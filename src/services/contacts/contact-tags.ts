import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/rows';
import { execute, insertRows } from '../../db/sql';

// contact_tags mirrors each contact's tags, with its created_at and updated_at, for the tag
// filter of the contact list (db/migrations/20261202000000-create-list-indexes.js). Written in
// the transaction that writes the contacts, by the writer that holds their locks, so a reader
// never sees the mirror out of step with the contact.

export interface TaggedContact {
  id: string;
  accountId: string;
  tags: readonly string[];
  // As the contacts row holds it (a raw value read back is fine).
  createdAt: unknown;
  updatedAt: Date;
  // Whether it had mirror rows before this write (a contact just created has none).
  existed: boolean;
}

const COLUMNS = ['contact_id', 'tag', 'account_id', 'created_at', 'updated_at'];

// Replaces the mirror rows of contacts just written: two statements whatever their number.
export async function replaceContactTags(
  db: Database,
  contacts: readonly TaggedContact[],
  transaction: Transaction,
): Promise<void> {
  const existing = contacts.filter((contact) => contact.existed).map((contact) => contact.id);
  if (existing.length > 0) {
    await execute(db, 'DELETE FROM contact_tags WHERE contact_id IN (?)', [existing], transaction);
  }
  const rows = contacts.flatMap((contact) =>
    contact.tags.map((tag) => [contact.id, tag, contact.accountId, toDate(contact.createdAt), contact.updatedAt]),
  );
  await insertRows(db, 'contact_tags', COLUMNS, rows, transaction);
}
