import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, insertRows } from '../../db/sql/statements';

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
  const plan = emailPrefixChanges(contacts);
  for (const [at, ids] of plan.touched) {
    await execute(db, 'UPDATE contact_email_prefixes SET updated_at = ? WHERE contact_id IN (?)', [new Date(at), ids], transaction);
  }
  if (plan.removed.length > 0) {
    await execute(
      db,
      `DELETE FROM contact_email_prefixes WHERE ${plan.removed.map(() => '(contact_id = ? AND prefix IN (?))').join(' OR ')}`,
      plan.removed.flatMap((change) => [change.id, change.prefixes]),
      transaction,
    );
  }
  await insertRows(
    db,
    'contact_email_prefixes',
    COLUMNS,
    plan.added.map((row) => [row.id, row.prefix, row.accountId, row.createdAt, row.updatedAt]),
    transaction,
  );
}

export interface EmailPrefixChanges {
  // Existing contacts whose rows take a new updated_at, by that time (ms).
  touched: Map<number, string[]>;
  // Prefixes an email change lost, per contact.
  removed: Array<{ id: string; prefixes: string[] }>;
  // Rows to insert: every prefix of a new contact, and those an email change gained.
  added: Array<{ id: string; prefix: string; accountId: string; createdAt: Date; updatedAt: Date }>;
}

// What syncEmailPrefixes writes, worked out without a database (the benchmark's bare server
// sends the same statements from it).
export function emailPrefixChanges(contacts: readonly EmailedContact[]): EmailPrefixChanges {
  const touched = new Map<number, string[]>();
  const removed: EmailPrefixChanges['removed'] = [];
  const added: EmailPrefixChanges['added'] = [];
  for (const contact of contacts) {
    const now = emailPrefixes(contact.email);
    const before = contact.previousEmail === null ? [] : emailPrefixes(contact.previousEmail);
    if (contact.previousEmail !== null) {
      const at = contact.updatedAt.getTime();
      const ids = touched.get(at);
      if (ids) ids.push(contact.id);
      else touched.set(at, [contact.id]);
    }
    const lost = before.filter((prefix) => !now.includes(prefix));
    if (lost.length > 0) removed.push({ id: contact.id, prefixes: lost });
    for (const prefix of now.filter((p) => !before.includes(p))) {
      added.push({ id: contact.id, prefix, accountId: contact.accountId, createdAt: toDate(contact.createdAt), updatedAt: contact.updatedAt });
    }
  }
  return { touched, removed, added };
}
