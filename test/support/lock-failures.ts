import { mysqlErrno } from '../../src/db/sql/transaction';
import { testDb } from './db';

// Counts the statements the database refused for a lock: deadlocks (1213) and lock-wait
// timeouts (1205), retried or not. Zero under contention means no transaction waited in a
// cycle: the locks were taken in one order.
export async function countLockFailures<T>(fn: () => Promise<T>): Promise<{ result: T; deadlocks: number; lockWaitTimeouts: number }> {
  const { sequelize } = testDb();
  const original = sequelize.query;
  const counts = { deadlocks: 0, lockWaitTimeouts: 0 };
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
    return original.apply(this, args).catch((error: unknown) => {
      const errno = mysqlErrno(error);
      if (errno === 1213) counts.deadlocks += 1;
      if (errno === 1205) counts.lockWaitTimeouts += 1;
      throw error;
    });
  } as typeof original;
  try {
    return { result: await fn(), ...counts };
  } finally {
    sequelize.query = original;
  }
}
