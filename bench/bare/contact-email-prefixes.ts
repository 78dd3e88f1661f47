import { toDate } from '../../src/db/rows';
import { emailPrefixes, type EmailedContact } from '../../src/services/contacts/contact-email-prefixes';
import { marks, sqlTimestamp, type Sql, type Tx } from './sql';

// src/services/contacts/contact-email-prefixes.ts on bare mysql2: the email prefix mirror
// brought in step by difference (existing rows' updated_at, lost prefixes, gained prefixes).
export async function syncEmailPrefixes(sql: Sql, contacts: readonly EmailedContact[], tx: Tx): Promise<void> {
  const byUpdatedAt = new Map<number, string[]>();
  for (const contact of contacts) {
    if (contact.previousEmail === null) continue;
    const ids = byUpdatedAt.get(contact.updatedAt.getTime()) ?? [];
    ids.push(contact.id);
    byUpdatedAt.set(contact.updatedAt.getTime(), ids);
  }
  for (const [at, ids] of byUpdatedAt) {
    await sql.run(`UPDATE contact_email_prefixes SET updated_at = ? WHERE contact_id IN (${marks(ids.length)})`, [sqlTimestamp(new Date(at)), ...ids], tx);
  }

  const changes = contacts.map((contact) => {
    const now = emailPrefixes(contact.email);
    const before = contact.previousEmail === null ? [] : emailPrefixes(contact.previousEmail);
    return { contact, removed: before.filter((p) => !now.includes(p)), added: now.filter((p) => !before.includes(p)) };
  });
  const removed = changes.filter((change) => change.removed.length > 0);
  if (removed.length > 0) {
    await sql.run(
      `DELETE FROM contact_email_prefixes WHERE ${removed.map((c) => `(contact_id = ? AND prefix IN (${marks(c.removed.length)}))`).join(' OR ')}`,
      removed.flatMap((change) => [change.contact.id, ...change.removed]),
      tx,
    );
  }

  const added = changes.flatMap(({ contact, added }) =>
    added.map((prefix) => [contact.id, prefix, contact.accountId, sqlTimestamp(toDate(contact.createdAt)), sqlTimestamp(contact.updatedAt)]),
  );
  if (added.length === 0) return;
  await sql.run(
    `INSERT INTO contact_email_prefixes (contact_id, prefix, account_id, created_at, updated_at) VALUES ${added.map(() => `(${marks(5)})`).join(', ')}`,
    added.flat(),
    tx,
  );
}
