import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/rows';
import { execute, insertRows } from '../../db/sql';

// contact_email_prefixes mirrors the first 1..EMAIL_PREFIX_LENGTH characters of each contact's
// email_normalized, with its created_at and updated_at, for q on the contact list
// (db/migrations/20261207000000-create-contact-email-prefixes.js). Written as contact_tags is:
// in the transaction that writes the contacts, by the writer that holds their locks, so a
// reader never sees the mirror out of step with the contact.

// The migration's PREFIX_LENGTHS end here: changing it needs a migration that rewrites the rows.
export const EMAIL_PREFIX_LENGTH = 4;

export interface EmailedContact {
  id: string;
  accountId: string;
  // email_normalized after this write, and before it (null for a contact this write creates).
  email: string;
  previousEmail: string | null;
  // As the contacts row holds it (a raw value read back is fine).
  createdAt: unknown;
  updatedAt: Date;
}

const COLUMNS = ['contact_id', 'prefix', 'account_id', 'created_at', 'updated_at'];

// The prefixes the mirror holds for an email, in characters (code points), as the database's
// LEFT/substr count them.
export function emailPrefixes(email: string): string[] {
  const characters = Array.from(email).slice(0, EMAIL_PREFIX_LENGTH);
  return characters.map((_, i) => characters.slice(0, i + 1).join(''));
}

// Brings the mirror of contacts just written in step, by difference, as syncContactTags does
// (and for the same reason: no delete and re-insert of rows that stay): every existing
// contact's rows take the new updated_at, in one statement per updated_at (one transaction's
// writes share one); an email change removes the prefixes it lost and adds those it gained.
// A batch of new contacts costs one INSERT; a batch of updates, one UPDATE.
export async function syncEmailPrefixes(
  db: Database,
  contacts: readonly EmailedContact[],
  transaction: Transaction,
): Promise<void> {
  const byUpdatedAt = new Map<number, string[]>();
  for (const contact of contacts) {
    if (contact.previousEmail === null) continue;
    const ids = byUpdatedAt.get(contact.updatedAt.getTime()) ?? [];
    ids.push(contact.id);
    byUpdatedAt.set(contact.updatedAt.getTime(), ids);
  }
  for (const [at, ids] of byUpdatedAt) {
    await execute(db, 'UPDATE contact_email_prefixes SET updated_at = ? WHERE contact_id IN (?)', [new Date(at), ids], transaction);
  }

  const changes = contacts.map((contact) => {
    const now = emailPrefixes(contact.email);
    const before = contact.previousEmail === null ? [] : emailPrefixes(contact.previousEmail);
    return { contact, removed: before.filter((p) => !now.includes(p)), added: now.filter((p) => !before.includes(p)) };
  });
  const removed = changes.filter((change) => change.removed.length > 0);
  if (removed.length > 0) {
    await execute(
      db,
      `DELETE FROM contact_email_prefixes WHERE ${removed.map(() => '(contact_id = ? AND prefix IN (?))').join(' OR ')}`,
      removed.flatMap((change) => [change.contact.id, change.removed]),
      transaction,
    );
  }

  const added = changes.flatMap(({ contact, added }) =>
    added.map((prefix) => [contact.id, prefix, contact.accountId, toDate(contact.createdAt), contact.updatedAt]),
  );
  await insertRows(db, 'contact_email_prefixes', COLUMNS, added, transaction);
}
