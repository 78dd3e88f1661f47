import fs from 'node:fs';
import path from 'node:path';
import 'reflect-metadata';
import { Sequelize } from 'sequelize-typescript';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from '../config';
import { LogThrottle } from '../logging/log-throttle';
import type { Logger } from '../logging/logger';
import { MODELS } from '../models';
import { parseDatabaseUrl } from './database-url';
import type { Dialect } from './dialect';
import { sqlTemplate } from './sql-template';
import { installDirectStatements } from './direct-statements';
import { boundStatements, type MysqlStatementConnection } from './statement-deadline';

export type { Dialect } from './dialect';

export interface Database {
  sequelize: Sequelize;
  dialect: Dialect;
  // Work a request does not wait for (a key's last-used time); close() lets it finish first.
  inBackground(task: Promise<unknown>): void;
  // Runs fn with no deadline on statements (DatabaseOptions.timeouts): migrations are not
  // requests, and may rightly take long (an ALTER of a big table, waiting for another
  // instance's migration lock).
  withoutStatementDeadline<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  logger?: Logger;
  // Called with every SQL statement; tests use it to count statements.
  onQuery?: (sql: string) => void;
  // How long a request may wait for a connection and for each statement (MySQL; an embedded
  // SQLite file cannot stop answering).
  timeouts?: DatabaseTimeouts;
}

// 10 connections x 64: 640 of the server's 16,382 (its default max_prepared_stmt_count).
const MAX_PREPARED_PER_CONNECTION = 64;

export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  const target = parseDatabaseUrl(url);
  const dialect: Dialect = target.dialect;
  // The statement's shape only: Sequelize passes it with the values inlined (keys' hashes,
  // contacts' personal data).
  const logging = (sql: string) => {
    options.onQuery?.(sql);
    if (options.logger?.isLevelEnabled('debug')) options.logger.debug({ sql: sqlTemplate(sql, dialect) }, 'sql');
  };
  const common = {
    logging,
    models: MODELS,
    // Every timestamp is UTC with milliseconds (docs/decisions.md "Timestamps and ids").
    timezone: '+00:00',
    define: { underscored: true },
  };

  let unbounded = 0;
  let sequelize: Sequelize;
  if (target.dialect === 'sqlite') {
    const { storage } = target;
    if (storage !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(storage)), { recursive: true });
    sequelize = new Sequelize({ ...common, dialect: 'sqlite', storage });
    if (storage !== ':memory:') shareOneWriterConnection(sequelize, (options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS).queryTimeoutMs);
  } else {
    const { acquireTimeoutMs, queryTimeoutMs } = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS;
    sequelize = new Sequelize(target.url, {
      ...common,
      dialect: 'mysql',
      // A new connection counts against the same wait as a pooled one. Each connection keeps
      // its prepared statements (src/db/direct-statements.ts) in a bounded cache, oldest closed
      // first: lists of every length would otherwise pile up to the server's
      // max_prepared_stmt_count, which all connections of all instances share.
      // typeCast: mysql2's own conversions instead of Sequelize's per-field callback. Through
      // a prepared statement, a callback costs an object and three closures per field of every
      // row (a 100-row read: 1,300), most of a batch's CPU. The only column type Sequelize
      // converts differently here is DATETIME, and mysql2 reads it in the same time zone
      // (+00:00, given above) into the same Date.
      dialectOptions: {
        charset: 'utf8mb4',
        connectTimeout: acquireTimeoutMs,
        maxPreparedStatements: MAX_PREPARED_PER_CONNECTION,
        typeCast: true,
      },
      pool: { max: 10, min: 0, idle: 10_000, acquire: acquireTimeoutMs },
      hooks: {
        afterConnect: (connection) => {
          boundStatements(connection as MysqlStatementConnection, () => (unbounded > 0 ? undefined : queryTimeoutMs));
          return prepareMysqlSession(connection as MysqlConnection);
        },
      },
    });
  }

  installDirectStatements(sequelize, dialect, logging);

  const pending = new Set<Promise<unknown>>();
  // A database that takes reads but refuses writes would fail this on every request.
  const backgroundFailures = new LogThrottle();
  return {
    sequelize,
    dialect,
    inBackground(task) {
      const settled = task
        .catch((error) => options.logger && backgroundFailures.log(options.logger, 'warn', 'background_write', { err: error }, 'background write failed'))
        .finally(() => pending.delete(settled));
      pending.add(settled);
    },
    async withoutStatementDeadline(fn) {
      unbounded += 1;
      try {
        return await fn();
      } finally {
        unbounded -= 1;
      }
    },
    async close() {
      await Promise.allSettled(pending);
      await sequelize.close();
    },
  };
}

interface SqliteConnectionManager {
  getConnection(options?: { uuid?: string }): Promise<object>;
  releaseConnection(connection: object): void;
}

// Sequelize opens, and closes, a new SQLite connection for every transaction on a file database
// (and SQLite parses the schema again on each). withTransaction already runs a database's
// transactions one at a time, so one long-lived writer connection serves them all, and every
// write goes through it (src/db/sql/transaction.ts); reads outside transactions keep their own
// connection and, with WAL, never wait for the writer. Another process writing to the same
// file is waited for at most busyTimeoutMs (DB_QUERY_TIMEOUT_MS), then the write is a 503.
function shareOneWriterConnection(sequelize: Sequelize, busyTimeoutMs: number) {
  const manager = sequelize.connectionManager as unknown as SqliteConnectionManager;
  const getConnection = manager.getConnection.bind(manager);
  const releaseConnection = manager.releaseConnection.bind(manager);
  let writer: object | undefined;
  const bounded = new WeakSet<object>();
  const bound = (connection: object) => {
    if (!bounded.has(connection)) {
      bounded.add(connection);
      (connection as { configure?: (option: 'busyTimeout', ms: number) => void }).configure?.('busyTimeout', busyTimeoutMs);
    }
    return connection;
  };
  manager.getConnection = async (options = {}) => {
    if (!options.uuid || options.uuid === 'default') return bound(await getConnection(options));
    writer = bound(await getConnection({ ...options, uuid: 'writer' }));
    return writer;
  };
  manager.releaseConnection = (connection) => {
    if (connection !== writer) releaseConnection(connection);
  };
}

interface MysqlConnection {
  query(sql: string, callback: (error: Error | null) => void): void;
}

// Once per connection, not per transaction:
// - READ COMMITTED, so that a read made after taking a lock sees what the lock's previous
//   holder committed. Under REPEATABLE READ (the server default) plain reads come from a
//   snapshot taken at the transaction's first read, before the lock was granted: the account's
//   active runs would be counted, and a contact's active run looked for, in stale data, and
//   concurrent enrollments would overshoot the account limit (docs/decisions.md "Account run limit").
// - No NO_BACKSLASH_ESCAPES: Sequelize escapes values with backslashes, which that mode would
//   read as text.
async function prepareMysqlSession(connection: MysqlConnection) {
  const run = (sql: string) =>
    new Promise<void>((resolve, reject) => connection.query(sql, (error) => (error ? reject(error) : resolve())));
  await run('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
  await run("SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')");
}

// Write-ahead logging lets reads proceed while a write transaction is open; it is a property
// of the database file, so setting it once at start-up is enough.
export async function prepareDatabase(db: Database): Promise<void> {
  if (db.dialect === 'sqlite') {
    const [[mode]] = (await db.sequelize.query('PRAGMA journal_mode')) as [Array<{ journal_mode: string }>, unknown];
    if (mode?.journal_mode !== 'memory') await db.sequelize.query('PRAGMA journal_mode = WAL');
  }
}
