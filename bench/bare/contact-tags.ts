import { toDate } from '../../src/db/sql/rows';
import type { TaggedContact } from '../../src/services/contacts/contact-tags';
import { marks, sqlTimestamp, type Sql, type Tx } from './sql';

// src/services/contacts/contact-tags.ts on bare mysql2: the tag mirror brought in step by
// difference, in at most three statements (kept rows' updated_at, removed rows, added rows).
export async function syncContactTags(sql: Sql, contacts: readonly TaggedContact[], tx: Tx): Promise<void> {
  const existing = contacts.filter((contact) => contact.previousTags !== null);
  const byUpdatedAt = new Map<number, string[]>();
  for (const contact of existing) {
    if (contact.previousTags!.length === 0) continue;
    const ids = byUpdatedAt.get(contact.updatedAt.getTime()) ?? [];
    ids.push(contact.id);
    byUpdatedAt.set(contact.updatedAt.getTime(), ids);
  }
  for (const [at, ids] of byUpdatedAt) {
    await sql.run(`UPDATE contact_tags SET updated_at = ? WHERE contact_id IN (${marks(ids.length)})`, [sqlTimestamp(new Date(at)), ...ids], tx);
  }

  const removed = existing
    .map((contact) => ({ id: contact.id, tags: contact.previousTags!.filter((tag) => !contact.tags.includes(tag)) }))
    .filter((contact) => contact.tags.length > 0);
  if (removed.length > 0) {
    await sql.run(
      `DELETE FROM contact_tags WHERE ${removed.map((c) => `(contact_id = ? AND tag IN (${marks(c.tags.length)}))`).join(' OR ')}`,
      removed.flatMap((contact) => [contact.id, ...contact.tags]),
      tx,
    );
  }

  const added = contacts.flatMap((contact) =>
    contact.tags
      .filter((tag) => !contact.previousTags?.includes(tag))
      .map((tag) => [contact.id, tag, contact.accountId, sqlTimestamp(toDate(contact.createdAt)), sqlTimestamp(contact.updatedAt)]),
  );
  if (added.length === 0) return;
  await sql.run(
    `INSERT INTO contact_tags (contact_id, tag, account_id, created_at, updated_at) VALUES ${added.map(() => `(${marks(5)})`).join(', ')}`,
    added.flat(),
    tx,
  );
}
