import { openDatabase, prepareDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { MODELS } from '../../src/models';

// One database for the whole run (sequelize-typescript binds models to one instance), emptied
// before every test. TEST_DATABASE_URL picks it: SQLite in memory by default, MariaDB in CI.
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'sqlite::memory:';

const LEDGERS = ['SequelizeMeta', 'sequelize_meta'];

let db: Database | undefined;
const queryListeners = new Set<(sql: string) => void>();

export function testDb(): Database {
  if (!db) throw new Error('test database not open: test/setup.ts opens it');
  return db;
}

export async function openTestDb(): Promise<Database> {
  db = openDatabase(TEST_DATABASE_URL, { onQuery: (sql) => queryListeners.forEach((listener) => listener(sql)) });
  await prepareDatabase(db);
  // A fresh schema each run, from the migrations, as production gets it.
  if (db.dialect === 'mysql') await dropAllTables(db);
  await migrateToLatest(db);
  return db;
}

// The tables the migrations made, the ledger left out. Read from the database, so that a new
// migration's tables are emptied and dropped without a list to keep in step.
export async function schemaTables(db: Database): Promise<string[]> {
  const tables = (await db.sequelize.getQueryInterface().showAllTables()) as Array<string | { tableName: string }>;
  return tables.map((table) => (typeof table === 'string' ? table : table.tableName)).filter((name) => !LEDGERS.includes(name));
}

// Foreign keys are off meanwhile, so the order does not matter. One connection throughout: the
// setting belongs to a connection (a transaction pins one on MySQL; SQLite has just one, and
// ignores the pragma inside a transaction).
async function withoutForeignKeys(db: Database, fn: (run: (sql: string) => Promise<unknown>) => Promise<void>): Promise<void> {
  if (db.dialect === 'sqlite') {
    await db.sequelize.query('PRAGMA foreign_keys = OFF');
    try {
      await fn((sql) => db.sequelize.query(sql));
    } finally {
      await db.sequelize.query('PRAGMA foreign_keys = ON');
    }
    return;
  }
  await db.sequelize.transaction(async (transaction) => {
    await db.sequelize.query('SET FOREIGN_KEY_CHECKS = 0', { transaction });
    await fn((sql) => db.sequelize.query(sql, { transaction }));
    await db.sequelize.query('SET FOREIGN_KEY_CHECKS = 1', { transaction });
  });
}

// Every table, the migration ledger too (and the name an early version used), or a later
// migrateToLatest would find no tables and nothing to migrate.
export async function dropAllTables(db: Database): Promise<void> {
  const tables = [...(await schemaTables(db)), ...LEDGERS];
  await withoutForeignKeys(db, async (run) => {
    for (const table of tables) await run(`DROP TABLE IF EXISTS ${table}`);
  });
}

export async function resetTestDb(): Promise<void> {
  const db = testDb();
  const tables = await schemaTables(db);
  await withoutForeignKeys(db, async (run) => {
    for (const table of tables) await run(`DELETE FROM ${table}`);
  });
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
