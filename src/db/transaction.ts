import { Transaction } from 'sequelize';
import type { Database } from './database';
import { orUnavailable } from './unavailable';

export type TransactionFn<T> = (transaction: Transaction) => Promise<T>;

const DEADLOCK_RETRIES = 5;

// Runs fn in a transaction, the one way the service writes.
// - SQLite: Sequelize shares one connection per database (and SQLite allows one writer), so
//   concurrent transactions interleave and fail. Transactions are queued, one at a time, per
//   database.
// - MySQL: a deadlock (1213) rolls back the whole transaction, so the whole function is run
//   again, after a short random wait; never a single statement inside it.
// - MySQL: READ COMMITTED, so that a read made after taking a lock sees what the lock's previous
//   holder committed. Under REPEATABLE READ (the server default) plain reads come from a
//   snapshot taken at the transaction's first read, before the lock was granted: the account's
//   active runs would be counted, and a contact's active run looked for, in stale data, and
//   concurrent enrollments would overshoot the account limit (CONTRACT.md "Sequence limit").
export async function withTransaction<T>(db: Database, fn: TransactionFn<T>): Promise<T> {
  if (db.dialect === 'sqlite') return serialised(db, () => orUnavailable(() => db.sequelize.transaction(fn)));
  const options = { isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await orUnavailable(() => db.sequelize.transaction(options, fn));
    } catch (error) {
      if (!isDeadlock(error) || attempt >= DEADLOCK_RETRIES) throw error;
      await sleep(5 + Math.random() * 20 * attempt);
    }
  }
}

const queues = new WeakMap<Database, Promise<unknown>>();

function serialised<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(db) ?? Promise.resolve();
  const result = previous.then(fn, fn);
  // The queue waits for the outcome, never for its error.
  queues.set(db, result.catch(() => undefined));
  return result;
}

export function isDeadlock(error: unknown): boolean {
  const code = mysqlErrno(error);
  return code === 1213 || code === 1205;
}

export function mysqlErrno(error: unknown): number | undefined {
  const candidates = [error, (error as { parent?: unknown })?.parent, (error as { original?: unknown })?.original];
  for (const candidate of candidates) {
    const errno = (candidate as { errno?: unknown })?.errno;
    if (typeof errno === 'number') return errno;
  }
  return undefined;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
