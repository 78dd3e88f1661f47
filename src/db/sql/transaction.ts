import type { Transaction } from 'sequelize';
import { ServiceUnavailableError } from '../../errors/app-errors';
import type { Database } from '../database';
import { orUnavailable } from './unavailable';
import { assertBeforeWriteDeadline } from './write-deadline';

export type TransactionFn<T> = (transaction: Transaction) => Promise<T>;

const DEADLOCK_RETRIES = 5;

// Runs fn in a transaction, the one way the service writes.
// - SQLite: Sequelize shares one connection per database (and SQLite allows one writer), so
//   concurrent transactions interleave and fail. Transactions are queued, one at a time, per
//   database, on its one writer connection (src/db/database.ts). A write outside any
//   transaction joins the same queue (writeOutsideTransaction), so the process has one writer.
//   Another process writing to the file (the admin command line) is waited for within the
//   connection's busy timeout; past it, or when SQLite refuses a transaction that read before
//   that process's commit, ServiceUnavailableError (503, Retry-After; src/db/sql/unavailable.ts).
// - MySQL: a deadlock (1213) rolls back the whole transaction, so the whole function is run
//   again, after a short random wait; never a single statement inside it. (A lock-wait
//   timeout is not retried: it has already waited long, and waiting again would double it.)
//   Transactions are READ COMMITTED, set on each connection (src/db/database.ts).
//   A deadlock still there after the last attempt, or a lock-wait timeout (1205), means a busy
//   database, not a bug: ServiceUnavailableError (503, Retry-After); nothing was written.
export async function withTransaction<T>(db: Database, fn: TransactionFn<T>): Promise<T> {
  const body = withBeforeCommit(fn);
  if (db.dialect === 'sqlite') return serialised(db, () => orUnavailable(() => db.sequelize.transaction(body)));
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await orUnavailable(() => db.sequelize.transaction(body));
    } catch (error) {
      if (isDeadlock(error)) transactionCounts(db).deadlocks += 1;
      if (!isDeadlock(error) || attempt >= DEADLOCK_RETRIES) throw busyOr(error);
      transactionCounts(db).retries += 1;
      await sleep(5 + Math.random() * 20 * attempt);
    }
  }
}

// Work a transaction leaves to its end, run just before its COMMIT and inside it (a tally of
// what the transaction changed, written once: src/services/sequences/run-status-counts.ts).
// Its locks are then taken last, and held only for the COMMIT. Kept per transaction: a
// transaction run again after a deadlock starts with none.
const beforeCommit = new WeakMap<Transaction, Array<() => Promise<void>>>();

export function onBeforeCommit(transaction: Transaction, work: () => Promise<void>): void {
  const list = beforeCommit.get(transaction);
  if (list) list.push(work);
  else beforeCommit.set(transaction, [work]);
}

function withBeforeCommit<T>(fn: TransactionFn<T>): TransactionFn<T> {
  return async (transaction) => {
    const result = await fn(transaction);
    // A piece of work may leave more (it runs in the loop's order).
    for (let list = beforeCommit.get(transaction); list && list.length > 0; ) await list.shift()!();
    // A request past its deadline commits nothing (./write-deadline.ts): it is rolled back.
    assertBeforeWriteDeadline();
    return result;
  };
}

// Per database, for GET /metrics (src/metrics/metrics.ts reads them when scraped).
export interface TransactionCounts {
  retries: number;
  deadlocks: number;
}

const counts = new WeakMap<Database, TransactionCounts>();

export function transactionCounts(db: Database): TransactionCounts {
  let tally = counts.get(db);
  if (!tally) counts.set(db, (tally = { retries: 0, deadlocks: 0 }));
  return tally;
}

const queues = new WeakMap<Database, Promise<unknown>>();

// A statement that writes, given no transaction (src/db/sql/statements.ts execute). MySQL runs
// it as it is (autocommit). SQLite has one writer: run on the reads' own connection, it would
// be a second writer, and a queued transaction that had read before it committed would be
// refused its first write (SQLITE_BUSY, "database is locked": a 500 for an enroll while sends
// are recorded). So it is a transaction of its own, in the queue. (A write made inside a
// transaction's work passes that transaction: one that did not would wait for itself here.)
export function writeOutsideTransaction<T>(db: Database, fn: (transaction: Transaction | undefined) => Promise<T>): Promise<T> {
  if (db.dialect !== 'sqlite') return fn(undefined);
  return withTransaction(db, (transaction) => fn(transaction));
}

function serialised<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(db) ?? Promise.resolve();
  const result = previous.then(fn, fn);
  // The queue waits for the outcome, never for its error.
  queues.set(db, result.catch(() => undefined));
  return result;
}

export function isDeadlock(error: unknown): boolean {
  return mysqlErrno(error) === 1213;
}

const LOCK_WAIT_TIMEOUT = 1205;

function busyOr(error: unknown): unknown {
  return isDeadlock(error) || mysqlErrno(error) === LOCK_WAIT_TIMEOUT
    ? new ServiceUnavailableError('Database busy; retry shortly', { cause: error })
    : error;
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
