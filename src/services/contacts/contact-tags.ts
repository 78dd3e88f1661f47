import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, insertRows } from '../../db/sql/statements';

// contact_tags mirrors each contact's tags, with its created_at and updated_at, for the tag
// filter of the contact list (db/migrations/20261202000000-create-list-indexes.js). Written in
// the transaction that writes the contacts, by the writer that holds their locks, so a reader
// never sees the mirror out of step with the contact.

export interface TaggedContact {
  id: string;
  accountId: string;
  tags: readonly string[];
  // The tags before this write; null for a contact this write creates.
  previousTags: readonly string[] | null;
  // As the contacts row holds it (a raw value read back is fine).
  createdAt: unknown;
  updatedAt: Date;
}

const COLUMNS = ['contact_id', 'tag', 'account_id', 'created_at', 'updated_at'];

// Brings the mirror of contacts just written in step, by difference, in three statements
// whatever their number (one transaction's writes share one updated_at): the kept rows get the new updated_at in place, the removed
// ones go, the added ones come. (Deleting every row and inserting it again would make each
// insert check a unique key that still holds its own deleted entry: on MySQL that check locks
// the gap before the entry, where a concurrent writer of a neighbouring contact inserts, and
// two such writers deadlock.)
export async function syncContactTags(
  db: Database,
  contacts: readonly TaggedContact[],
  transaction: Transaction,
): Promise<void> {
  const existing = contacts.filter((contact) => contact.previousTags !== null);
  const byUpdatedAt = new Map<number, string[]>();
  for (const contact of existing) {
    if (contact.previousTags!.length === 0) continue;
    const ids = byUpdatedAt.get(contact.updatedAt.getTime()) ?? [];
    ids.push(contact.id);
    byUpdatedAt.set(contact.updatedAt.getTime(), ids);
  }
  for (const [at, ids] of byUpdatedAt) {
    await execute(db, 'UPDATE contact_tags SET updated_at = ? WHERE contact_id IN (?)', [new Date(at), ids], transaction);
  }

  const removed = existing
    .map((contact) => ({ id: contact.id, tags: contact.previousTags!.filter((tag) => !contact.tags.includes(tag)) }))
    .filter((contact) => contact.tags.length > 0);
  if (removed.length > 0) {
    await execute(
      db,
      `DELETE FROM contact_tags WHERE ${removed.map(() => '(contact_id = ? AND tag IN (?))').join(' OR ')}`,
      removed.flatMap((contact) => [contact.id, contact.tags]),
      transaction,
    );
  }

  const added = contacts.flatMap((contact) =>
    contact.tags
      .filter((tag) => !contact.previousTags?.includes(tag))
      .map((tag) => [contact.id, tag, contact.accountId, toDate(contact.createdAt), contact.updatedAt]),
  );
  await insertRows(db, 'contact_tags', COLUMNS, added, transaction);
}
