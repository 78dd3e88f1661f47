import type { QueryOptions, Transaction } from 'sequelize';
import type { Sequelize } from 'sequelize-typescript';
import type { Dialect } from './dialect';

// The request path's statements (src/db/sql/statements.ts) run on Sequelize's own connections, but not
// through its query path: per statement that path builds a Query object, captures a stack
// (`new Error()`, and on SQLite reads `.stack` every time, which is costly under source maps),
// escapes every value into the text in JavaScript, and mysql2 then scans the text again.
// Here a statement is sent with its values bound: a prepared statement on MySQL (mysql2
// `execute`, prepared once per connection and cached), a bound statement on SQLite.
//
// What stays Sequelize's: the pool (a connection is taken from it and given back, with its
// acquire timeout), the transaction's connection, its logging callback (statement counts),
// and its error classes (a failure is formatted by the dialect's own Query.formatError, so
// a unique-index clash is still a UniqueConstraintError and a lost connection a DatabaseError
// with the driver's code as `parent`).
//
// It is reached through sequelize.query with the option below, so that everything that wraps
// sequelize.query (tests that make statements fail or hold them) sees these statements too.

export interface DirectStatement {
  values: readonly unknown[];
  returnsRows: boolean;
}

const DIRECT = 'directStatement';

export function directStatementOptions(statement: DirectStatement, transaction?: Transaction): QueryOptions {
  return { transaction, [DIRECT]: statement } as QueryOptions;
}

type MysqlSend = (sql: string, values: unknown[], callback: (error: Error | null, result: unknown) => void) => unknown;

interface Connection {
  // mysql2
  execute?: MysqlSend;
  query?: MysqlSend;
  // sqlite3
  all?: (sql: string, values: unknown[], callback: (error: Error | null, rows: unknown[]) => void) => unknown;
  run?: (sql: string, values: unknown[], callback: (this: { changes: number }, error: Error | null) => void) => unknown;
}

interface ConnectionManager {
  getConnection(options: object): Promise<Connection>;
  releaseConnection(connection: Connection): Promise<void> | void;
}

interface DialectQuery {
  new (connection: unknown, sequelize: Sequelize, options: object): { formatError(error: Error, stack?: string): Error };
}

const MYSQL_DEADLOCK = 1213;

// Installs the direct path on this Sequelize instance. `log` gets each statement as Sequelize's
// logging callback would (values not inlined).
export function installDirectStatements(sequelize: Sequelize, dialect: Dialect, log: (sql: string) => void): void {
  const viaSequelize = sequelize.query.bind(sequelize) as (sql: unknown, options?: QueryOptions) => Promise<unknown>;
  const manager = sequelize.connectionManager as unknown as ConnectionManager;
  const Query = (sequelize as unknown as { dialect: { Query: DialectQuery } }).dialect.Query;
  const send = dialect === 'sqlite' ? sendSqlite : sendMysql;

  const direct = async (sql: string, statement: DirectStatement, transaction: Transaction | undefined) => {
    const [text, values] = expandLists(sql, statement.values, dialect);
    log(`Executing (${transaction ? (transaction as unknown as { id: string }).id : 'default'}): ${text}`);
    const connection = transaction
      ? ((transaction as unknown as { connection: Connection }).connection)
      : await manager.getConnection(dialect === 'sqlite' ? { uuid: 'default' } : {});
    try {
      return await send(connection, text, values, statement.returnsRows);
    } catch (error) {
      if (transaction && dialect === 'mysql' && (error as { errno?: unknown }).errno === MYSQL_DEADLOCK) {
        // The server has rolled the transaction back already; Sequelize's own path marks it so.
        await transaction.rollback().catch(() => undefined);
        (transaction as unknown as { finished: string }).finished = 'rollback';
      }
      Object.assign(error as object, { sql: text });
      // Captured here, not per statement: only a failure pays for a stack.
      throw new Query(connection, sequelize, {}).formatError(error as Error, new Error().stack);
    } finally {
      if (!transaction && dialect === 'mysql') await manager.releaseConnection(connection);
    }
  };

  sequelize.query = function query(sql: unknown, options?: QueryOptions) {
    const statement = (options as Record<string, DirectStatement | undefined> | undefined)?.[DIRECT];
    if (statement && typeof sql === 'string') return direct(sql, statement, options?.transaction ?? undefined);
    // A transaction's own BEGIN, COMMIT and ROLLBACK (Sequelize's Transaction sends them through
    // here, on its connection): the same text, without a Query object and a stack each, two
    // of a write request's statements.
    const transaction = options?.transaction as (Transaction & { connection?: Connection }) | null | undefined;
    if (transaction?.connection && typeof sql === 'string' && TRANSACTION_CONTROL.test(sql)) {
      return direct(sql, CONTROL, transaction).then(() => [[], 0]);
    }
    return viaSequelize(sql, options);
  } as typeof sequelize.query;
}

// Locking reads go as text (values escaped by mysql2, no Query object either). Sent as prepared
// statements, MariaDB 10.11's `SELECT ... WHERE account_id = ? AND email_normalized IN (?, ...)
// FOR UPDATE` deadlocked with concurrent batch upserts (test/http/sequences-contention.test.ts:
// 60-110 deadlocks a run; as text, none), although both use the same index range and EXPLAIN
// the same: the prepared form does not lock in the index order the lock order relies on.
const LOCKING_READ = /\b(FOR UPDATE|LOCK IN SHARE MODE)$/;

// What Sequelize's query generators write to begin and end a top-level transaction (a nested
// one's SAVEPOINT statements keep Sequelize's own path). Sent as text: they take no values.
const TRANSACTION_CONTROL = /^(START TRANSACTION|BEGIN (DEFERRED|IMMEDIATE|EXCLUSIVE) TRANSACTION|COMMIT|ROLLBACK);$/;
const CONTROL: DirectStatement = { values: [], returnsRows: false };

function sendMysql(connection: Connection, sql: string, values: unknown[], returnsRows: boolean): Promise<unknown> {
  const send = LOCKING_READ.test(sql) || TRANSACTION_CONTROL.test(sql) ? connection.query! : connection.execute!;
  return new Promise((resolve, reject) => {
    send.call(connection, sql, values, (error, result) => {
      if (error) reject(error);
      else resolve(returnsRows ? result : (result as { affectedRows?: number }).affectedRows ?? 0);
    });
  });
}

function sendSqlite(connection: Connection, sql: string, values: unknown[], returnsRows: boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (returnsRows) {
      connection.all!(sql, values, (error, rows) => (error ? reject(error) : resolve(rows)));
    } else {
      connection.run!(sql, values, function done(error) {
        if (error) reject(error);
        else resolve(this.changes);
      });
    }
  });
}

// An array value stands for a list: its `?` becomes one placeholder per item (an empty list
// NULL, as Sequelize writes it, so `IN (NULL)` matches nothing). Every distinct list length is
// its own prepared statement; mysql2's per-connection cache is bounded (src/db/database.ts).
// Dates become text in the form each dialect stores (see sqlTimestamp in src/db/sql/statements.ts).
function expandLists(sql: string, values: readonly unknown[], dialect: Dialect): [string, unknown[]] {
  if (!values.some(Array.isArray)) return [sql, values.map((value) => bindValue(value, dialect))];
  const parts = sql.split('?');
  if (parts.length - 1 !== values.length) throw new Error(`${values.length} values for ${parts.length - 1} placeholders`);
  const flat: unknown[] = [];
  let text = parts[0];
  values.forEach((value, i) => {
    if (Array.isArray(value)) {
      text += value.length === 0 ? 'NULL' : new Array(value.length).fill('?').join(', ');
      for (const item of value) flat.push(bindValue(item, dialect));
    } else {
      text += '?';
      flat.push(bindValue(value, dialect));
    }
    text += parts[i + 1];
  });
  return [text, flat];
}

function bindValue(value: unknown, dialect: Dialect): unknown {
  if (value === undefined) return null;
  if (value instanceof Date) return storedTimestamp(value, dialect);
  return value;
}

// What Sequelize writes for a Date with timezone +00:00: 'YYYY-MM-DD HH:mm:ss.SSS +00:00' on
// SQLite (the models read that form back), 'YYYY-MM-DD HH:mm:ss.SSS' into MySQL's DATETIME(3).
// A multi-row write binds one `now` per row twice: the last one's text is kept.
let lastStamp = { time: NaN, dialect: '', text: '' };

function storedTimestamp(date: Date, dialect: Dialect): string {
  const time = date.getTime();
  if (time === lastStamp.time && dialect === lastStamp.dialect) return lastStamp.text;
  const iso = date.toISOString().slice(0, 23).replace('T', ' ');
  const text = dialect === 'sqlite' ? `${iso} +00:00` : iso;
  lastStamp = { time, dialect, text };
  return text;
}
