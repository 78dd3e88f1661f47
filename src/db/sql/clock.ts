import type { Transaction } from 'sequelize';
import type { Database } from '../database';
import { toDate } from './rows';
import { select } from './statements';

// The database's clock: the one time every process agrees on. Work claimed with a lease (the
// sequence engine's runs) compares due times and lease ends against it, so that a process whose
// own clock is off cannot take a lease another process still holds, nor hand out one that has
// already ended (docs/architecture.md "One clock"). Tests do not sleep to move it: a loop reads
// it through its Timers (src/services/background/timers.ts), and a test's timers answer with
// the test's time.
// - MySQL/MariaDB: UTC_TIMESTAMP(3), whatever the session's time zone (dates are stored in UTC).
// - SQLite: its own 'now' (the host's clock, read by SQLite), to the millisecond.
export async function databaseNow(db: Database, transaction?: Transaction): Promise<Date> {
  const sql = db.dialect === 'sqlite' ? "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS now" : 'SELECT UTC_TIMESTAMP(3) AS now';
  const [row] = await select<{ now: unknown }>(db, sql, [], transaction);
  return toDate(row!.now);
}
