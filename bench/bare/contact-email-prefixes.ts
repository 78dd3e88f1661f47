import { emailPrefixChanges, type EmailedContact } from '../../src/services/contacts/contact-email-prefixes';
import { marks, sqlTimestamp, type Sql, type Tx } from './sql';

// src/services/contacts/contact-email-prefixes.ts on bare mysql2: the same plan (its pure part,
// emailPrefixChanges), sent as the same statements.
export async function syncEmailPrefixes(sql: Sql, contacts: readonly EmailedContact[], tx: Tx): Promise<void> {
  const plan = emailPrefixChanges(contacts);
  for (const [at, ids] of plan.touched) {
    await sql.run(`UPDATE contact_email_prefixes SET updated_at = ? WHERE contact_id IN (${marks(ids.length)})`, [sqlTimestamp(new Date(at)), ...ids], tx);
  }
  if (plan.removed.length > 0) {
    await sql.run(
      `DELETE FROM contact_email_prefixes WHERE ${plan.removed.map((c) => `(contact_id = ? AND prefix IN (${marks(c.prefixes.length)}))`).join(' OR ')}`,
      plan.removed.flatMap((change) => [change.id, ...change.prefixes]),
      tx,
    );
  }
  if (plan.added.length === 0) return;
  await sql.run(
    `INSERT INTO contact_email_prefixes (contact_id, prefix, account_id, created_at, updated_at) VALUES ${plan.added.map(() => `(${marks(5)})`).join(', ')}`,
    plan.added.flatMap((row) => [row.id, row.prefix, row.accountId, sqlTimestamp(row.createdAt), sqlTimestamp(row.updatedAt)]),
    tx,
  );
}
