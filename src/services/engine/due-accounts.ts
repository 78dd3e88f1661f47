import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';

// The accounts that have runs due, found a slice at a time for the fair claim (run-queue.ts).
//
// A slice is the next SLICE_ACCOUNTS accounts after the cursor, in the accounts table's key
// order; for each, its earliest due time is the first entry of its range in
// sequence_runs_account_due (due_account, due_at)
// (db/migrations/20261213000000-add-sequence-runs-account-due.js): one look-up per account,
// whatever the number of its runs, due or ended. The engine carries the cursor from pass to
// pass (round-robin over all accounts); below SLICE_ACCOUNTS accounts a slice is all of them,
// so every account with due runs is seen in every pass.
//
// One statement on both dialects, whose plan does not depend on the table's statistics: the
// slice is a range of the accounts' primary key, and the earliest due time a subquery in the
// select list (never turned into a semi-join) that reads its index in order and stops at one
// row. (A GROUP BY over an (account_id, due_at) index is MariaDB's loose index scan only while
// its statistics say so: with stale ones, right after a bulk enrollment, it read the whole index
// instead, 0.8 s a pass at 500,000 due runs.)

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

// Its text, also for the benchmark's EXPLAIN.
export function dueAccountsSql(slice: number): string {
  return `SELECT id, (SELECT due_at FROM sequence_runs WHERE due_account = slice.id ORDER BY due_at LIMIT 1) AS next_due
     FROM (SELECT id FROM accounts WHERE id > ? ORDER BY id LIMIT ${slice}) slice ORDER BY id`;
}

export async function dueAccounts(db: Database, now: Date, options: SliceOptions, transaction: Transaction): Promise<DueAccounts> {
  const limit = Math.max(1, Math.floor(options.limit));
  const slice = Math.max(1, Math.floor(options.slice ?? SLICE_ACCOUNTS));
  const rows = await select<{ id: string; next_due: unknown }>(db, dueAccountsSql(slice), [options.after], transaction);
  const accounts: string[] = [];
  for (const row of rows) {
    if (row.next_due === null || row.next_due === undefined || toDate(row.next_due) > now) continue;
    accounts.push(row.id);
    if (accounts.length >= limit) return { accounts, cursor: row.id };
  }
  return { accounts, cursor: rows.length >= slice ? rows.at(-1)!.id : '' };
}
