import fs from 'node:fs';
import type { Database } from '../../src/db/database';
import { createMigrator, MIGRATIONS_DIR } from '../../src/db/migrator';

// Applies every migration older than `migration`: the schema an upgrade to it finds.
export async function migrateToJustBefore(db: Database, migration: string): Promise<void> {
  const files = fs.readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.js')).sort();
  await createMigrator(db).up({ to: files[files.indexOf(migration) - 1] });
}

export interface OldContact {
  id: string;
  email: string;
  tags?: string[];
  // Its created_at and updated_at: this many minutes into 2026.
  minute: number;
}

// An account and its contacts as a schema before the list migrations holds them, written in
// plain SQL (the models follow the newest schema). email_normalized is the email as given.
export async function insertOldContacts<T extends OldContact>(db: Database, accountId: string, contacts: T[]): Promise<T[]> {
  const now = new Date(Date.UTC(2026, 0, 1));
  await db.sequelize.query(
    'INSERT INTO accounts (id, name, max_active_runs, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)',
    { replacements: [accountId, 'Before the upgrade', now, now] },
  );
  for (const contact of contacts) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, contact.minute));
    await db.sequelize.query(
      `INSERT INTO contacts (id, account_id, email, email_normalized, tags, custom_fields, email_subscription_status,
         whatsapp_subscription_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, '{}', 'subscribed', 'subscribed', ?, ?)`,
      { replacements: [contact.id, accountId, contact.email, contact.email, JSON.stringify(contact.tags ?? []), at, at] },
    );
  }
  return contacts;
}
