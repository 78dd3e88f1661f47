import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';

// The accounts that have runs due, found a slice at a time for the fair claim (run-queue.ts),
// through the sequence_runs_account_due index (account_id, due_at)
// (db/migrations/20261213000000-add-sequence-runs-account-due.js).
//
// A slice is the next SLICE_ACCOUNTS accounts that have runs at all, after `after` in account
// order; of those, at most `limit` with runs due are answered. Its cost is the slice's, one
// index look-up or two per account, whatever the number of runs each has: an account with half
// a million due runs costs what one with a single run costs. The engine carries the cursor
// from pass to pass (round-robin over the account space); below SLICE_ACCOUNTS accounts every
// slice is the whole table, so every account with due runs is seen in every pass.
// - MariaDB/MySQL: a loose index scan ("Using index for group-by"), once to find where the
//   slice ends and once for the accounts in it with a run due.
// - SQLite has no loose index scan: a recursive walk of the index's distinct accounts, one
//   seek each, which SQLite answers in process.

export const SLICE_ACCOUNTS = 1_000;

export interface DueAccounts {
  accounts: string[];
  // Where the next slice starts: after the last account answered when `limit` cut the slice,
  // else after the slice's end; '' (the start) when the slice reached the last account.
  cursor: string;
}

export interface SliceOptions {
  after: string;
  // Accounts with due runs answered at most.
  limit: number;
  // Accounts looked at (SLICE_ACCOUNTS unless given).
  slice?: number;
}

export async function dueAccounts(db: Database, now: Date, options: SliceOptions, transaction: Transaction): Promise<DueAccounts> {
  const { after } = options;
  const limit = Math.max(1, Math.floor(options.limit));
  const slice = Math.max(1, Math.floor(options.slice ?? SLICE_ACCOUNTS));
  return db.dialect === 'sqlite'
    ? dueAccountsSqlite(db, now, after, limit, slice, transaction)
    : dueAccountsMysql(db, now, after, limit, slice, transaction);
}

// MySQL/MariaDB's two statements, also for the benchmark's EXPLAIN: where the slice of `slice`
// accounts after the cursor ends, and the accounts in it (up to the end when `bounded` is false)
// with a run due.
export function sliceEndSql(slice: number): string {
  return `SELECT account_id FROM sequence_runs FORCE INDEX (sequence_runs_account_due) WHERE account_id > ?
     GROUP BY account_id ORDER BY account_id LIMIT 1 OFFSET ${slice - 1}`;
}

export function dueInSliceSql(bounded: boolean, limit: number): string {
  return `SELECT account_id, MIN(due_at) AS due_at FROM sequence_runs FORCE INDEX (sequence_runs_account_due)
     WHERE account_id > ?${bounded ? ' AND account_id <= ?' : ''} AND due_at <= ?
     GROUP BY account_id ORDER BY account_id LIMIT ${limit}`;
}

async function dueAccountsMysql(db: Database, now: Date, after: string, limit: number, slice: number, transaction: Transaction): Promise<DueAccounts> {
  const [end] = await select<{ account_id: string }>(db, sliceEndSql(slice), [after], transaction);
  const rows = await select<{ account_id: string }>(db, dueInSliceSql(end !== undefined, limit), end ? [after, end.account_id, now] : [after, now], transaction);
  const accounts = rows.map((row) => row.account_id);
  return { accounts, cursor: accounts.length >= limit ? accounts.at(-1)! : (end?.account_id ?? '') };
}

async function dueAccountsSqlite(db: Database, now: Date, after: string, limit: number, slice: number, transaction: Transaction): Promise<DueAccounts> {
  const rows = await select<{ id: string; due: number; n: number }>(
    db,
    `WITH RECURSIVE slice (id, n) AS (
       SELECT (SELECT account_id FROM sequence_runs INDEXED BY sequence_runs_account_due WHERE account_id > ? ORDER BY account_id LIMIT 1), 1
       UNION ALL
       SELECT (SELECT account_id FROM sequence_runs INDEXED BY sequence_runs_account_due WHERE account_id > slice.id ORDER BY account_id LIMIT 1), n + 1
       FROM slice WHERE slice.id IS NOT NULL AND n < ${slice}
     )
     SELECT id, n, EXISTS (SELECT 1 FROM sequence_runs INDEXED BY sequence_runs_account_due WHERE account_id = slice.id AND due_at <= ?) AS due
     FROM slice WHERE id IS NOT NULL ORDER BY n`,
    [after, now],
    transaction,
  );
  const accounts: string[] = [];
  for (const row of rows) {
    if (!Number(row.due)) continue;
    accounts.push(row.id);
    if (accounts.length >= limit) return { accounts, cursor: row.id };
  }
  return { accounts, cursor: rows.length >= slice ? rows.at(-1)!.id : '' };
}
