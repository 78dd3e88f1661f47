import fs from 'node:fs';
import type { Database } from '../../src/db/database';
import { createMigrator, MIGRATIONS_DIR } from '../../src/db/migrator';

// Applies every migration older than `migration`: the schema an upgrade to it finds.
export async function migrateToJustBefore(db: Database, migration: string): Promise<void> {
  const files = fs.readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.js')).sort();
  await createMigrator(db).up({ to: files[files.indexOf(migration) - 1] });
}
