import fs from 'node:fs';
import path from 'node:path';
import { DataTypes } from 'sequelize';
import type * as UmzugModule from 'umzug';
import type { Logger } from '../logging/logger';
import type { Database } from './database';

export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'db', 'migrations');

interface MigrationModule {
  up(queryInterface: unknown, sequelize: unknown): Promise<void>;
  down(queryInterface: unknown, sequelize: unknown): Promise<void>;
}

// The migration files are in sequelize-cli's format, and the applied ones are recorded in the
// same SequelizeMeta table sequelize-cli uses, so either tool can run them.
export function createMigrator(db: Database, logger?: Logger) {
  // Loaded when there is something to migrate: umzug brings its command line's dependencies
  // (about 170 modules), a fifth of a start on an up-to-date database.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { SequelizeStorage, Umzug } = require('umzug') as typeof UmzugModule;
  const queryInterface = db.sequelize.getQueryInterface();
  return new Umzug({
    migrations: {
      glob: ['*.js', { cwd: MIGRATIONS_DIR }],
      resolve: ({ name, path: file }) => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const migration = require(file as string) as MigrationModule;
        return {
          name,
          up: () => migration.up(queryInterface, DataTypes),
          down: () => migration.down(queryInterface, DataTypes),
        };
      },
    },
    // Named explicitly: the instance's underscored default would make it sequelize_meta.
    storage: new SequelizeStorage({ sequelize: db.sequelize, tableName: 'SequelizeMeta' }),
    context: queryInterface,
    logger: logger
      ? {
          info: (event) => logger.info(event, 'migration'),
          warn: (event) => logger.warn(event, 'migration'),
          error: (event) => logger.error(event, 'migration'),
          debug: (event) => logger.debug(event, 'migration'),
        }
      : undefined,
  });
}

export async function migrateToLatest(db: Database, logger?: Logger): Promise<string[]> {
  return db.withoutStatementDeadline(async () => {
    // Nothing pending (the usual start): no lock, no migrator. Otherwise umzug decides again
    // under the lock, as before.
    if (!(await hasPendingMigrations(db))) return [];
    return withMigrationLock(db, async () => {
      const applied = await createMigrator(db, logger).up();
      return applied.map((migration) => migration.name);
    });
  });
}

// Whether a migration file has no row in SequelizeMeta (or there is no such table yet).
async function hasPendingMigrations(db: Database): Promise<boolean> {
  const files = fs.readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.js'));
  let applied: Array<{ name: string }>;
  try {
    applied = (await db.sequelize.query('SELECT name FROM SequelizeMeta', { type: 'SELECT' })) as Array<{ name: string }>;
  } catch {
    return true;
  }
  const names = new Set(applied.map((row) => row.name));
  return files.some((file) => !names.has(file));
}

const LOCK = "'contact-service:migrations'";

// Several instances starting at once on MySQL take turns; the later ones find nothing to do.
// GET_LOCK belongs to a connection: a transaction holds one for the lock's lifetime while the
// migrations run on others. (SQLite needs none: one writer, one process starting it.)
async function withMigrationLock<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  if (db.dialect !== 'mysql') return fn();
  return db.sequelize.transaction(async (transaction) => {
    const [row] = (await db.sequelize.query(`SELECT GET_LOCK(${LOCK}, 120) AS acquired`, {
      type: 'SELECT',
      transaction,
    })) as Array<{ acquired: number | string | null }>;
    if (Number(row?.acquired) !== 1) throw new Error('Another instance held the migration lock for 120 s');
    try {
      return await fn();
    } finally {
      await db.sequelize.query(`SELECT RELEASE_LOCK(${LOCK})`, { transaction });
    }
  });
}
