import { openDatabase, prepareDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { MODELS } from '../../src/models';

// One database for the whole run (sequelize-typescript binds models to one instance), emptied
// before every test. TEST_DATABASE_URL picks it: SQLite in memory by default, MariaDB in CI.
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'sqlite::memory:';

const TABLES_CHILD_FIRST = ['run_limit_locks', 'enrollments', 'sequence_runs', 'sequences', 'contacts', 'api_keys', 'accounts'];

let db: Database | undefined;
const queryListeners = new Set<(sql: string) => void>();

export function testDb(): Database {
  if (!db) throw new Error('test database not open: test/setup.ts opens it');
  return db;
}

export async function openTestDb(): Promise<Database> {
  db = openDatabase(TEST_DATABASE_URL, { onQuery: (sql) => queryListeners.forEach((listener) => listener(sql)) });
  await prepareDatabase(db);
  if (db.dialect === 'mysql') {
    // A fresh schema each run, from the migrations, as production gets it.
    await db.sequelize.query('SET FOREIGN_KEY_CHECKS = 0');
    // The migration ledger too (and the name an early version used), or a second run on the
    // same database would find no tables and nothing to migrate.
    for (const table of [...TABLES_CHILD_FIRST, 'SequelizeMeta', 'sequelize_meta']) {
      await db.sequelize.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await db.sequelize.query('SET FOREIGN_KEY_CHECKS = 1');
  }
  await migrateToLatest(db);
  return db;
}

export async function resetTestDb(): Promise<void> {
  for (const table of TABLES_CHILD_FIRST) await testDb().sequelize.query(`DELETE FROM ${table}`);
}

export async function closeTestDb(): Promise<void> {
  await db?.close();
  db = undefined;
}

// The SQL statements fn sends (transaction control included), for set-based checks.
export async function captureQueries<T>(fn: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const queries: string[] = [];
  const listener = (sql: string) => queries.push(sql);
  queryListeners.add(listener);
  try {
    return { result: await fn(), queries };
  } finally {
    queryListeners.delete(listener);
  }
}

// sequelize-typescript binds the model classes to the Sequelize instance opened last. A test
// that opens a database of its own (the CLI, a broken database) calls this afterwards, so the
// models serve the test database again.
export function rebindModelsToTestDb(): void {
  testDb().sequelize.addModels(MODELS);
}

// Makes every SQL statement that mentions the contacts table fail with `message`, the way a
// lost connection would; the API-key lookup still works, so the request reaches the service.
export async function withFailingContactQueries<T>(fn: () => Promise<T>, message = 'connection lost'): Promise<T> {
  return withFailingStatements({ scope: 'contacts', failure: () => new Error(message) }, fn);
}

// Makes SQL statements reject with `failure()`: those that mention the contacts table, or all
// of them (the API-key lookup too). The stub is removed when fn settles.
export async function withFailingStatements<T>(
  options: { scope: 'contacts' | 'all'; failure: () => Error },
  fn: () => Promise<T>,
): Promise<T> {
  const { sequelize } = testDb();
  const original = sequelize.query;
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
    const [sql] = args;
    const text = typeof sql === 'string' ? sql : ((sql as { query?: string }).query ?? '');
    if (options.scope === 'all' || /contacts/i.test(text)) return Promise.reject(options.failure());
    return original.apply(this, args);
  } as typeof original;
  try {
    return await fn();
  } finally {
    sequelize.query = original;
  }
}
