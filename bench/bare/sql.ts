import mysql, { type Pool, type PoolConnection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';

// The bare server's data access: one mysql2 pool, no ORM. Statements are the service's,
// text for text (src/services/**, src/db/sql/statements.ts); only the way they travel may differ:
// - 'execute' (default): prepared statements, cached per connection by mysql2, values bound
//   by the server; what a lean hand-written server does.
// - 'query': text statements with values escaped by mysql2 in JS, as Sequelize sends them.

export type SqlMode = 'execute' | 'query';

export type Tx = PoolConnection;

export interface Sql {
  rows<T>(sql: string, params: readonly unknown[], tx?: Tx): Promise<T[]>;
  run(sql: string, params: readonly unknown[], tx?: Tx): Promise<ResultSetHeader>;
  // START TRANSACTION ... COMMIT on one connection; a deadlock runs fn again, as
  // src/db/sql/transaction.ts does.
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const DEADLOCK_RETRIES = 5;

// The service's session set-up, once per connection (Sequelize's time zone, then
// src/db/database.ts): the same isolation level makes the same locks.
const SESSION = [
  "SET time_zone = '+00:00'",
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
  "SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')",
];

export function openSql(url: string, mode: SqlMode): Sql {
  // Sequelize's pool for the service: at most 10 connections. No `trace`: mysql2/promise would
  // otherwise capture a stack on every statement (8-10 % of this server's CPU under
  // bench:profile), work the service's request path does not do (src/db/direct-statements.ts).
  const pool: Pool = mysql.createPool({ uri: url, connectionLimit: 10, charset: 'utf8mb4', timezone: 'Z', trace: false });
  pool.pool.on('connection', (connection) => {
    for (const statement of SESSION) connection.query(statement, (error: unknown) => error && console.error(error));
  });

  const send = async (sql: string, params: readonly unknown[], on: Pool | Tx) => {
    const [result] =
      mode === 'execute'
        ? await on.execute(sql, params as Parameters<Pool['execute']>[1])
        : await on.query(sql, params as Parameters<Pool['query']>[1]);
    return result;
  };

  return {
    async rows<T>(sql: string, params: readonly unknown[], tx?: Tx) {
      return (await send(sql, params, tx ?? pool)) as RowDataPacket[] as T[];
    },
    async run(sql: string, params: readonly unknown[], tx?: Tx) {
      return (await send(sql, params, tx ?? pool)) as ResultSetHeader;
    },
    async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt += 1) {
        const tx = await pool.getConnection();
        try {
          await tx.query('START TRANSACTION');
          const result = await fn(tx);
          await tx.query('COMMIT');
          return result;
        } catch (error) {
          await tx.query('ROLLBACK').catch(() => undefined);
          if (errno(error) !== 1213 || attempt >= DEADLOCK_RETRIES) throw error;
          await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
        } finally {
          tx.release();
        }
      }
    },
    close: () => pool.end(),
  };
}

export function errno(error: unknown): number | undefined {
  const value = (error as { errno?: unknown })?.errno;
  return typeof value === 'number' ? value : undefined;
}

// `?, ?, ?` for an IN list or a VALUES tuple of n values.
export function marks(n: number): string {
  return new Array(n).fill('?').join(', ');
}

// A timestamp as the service binds it on MySQL (src/db/sql/statements.ts sqlTimestamp): milliseconds kept.
export function sqlTimestamp(date: Date): string {
  return date.toISOString().slice(0, 23).replace('T', ' ');
}
