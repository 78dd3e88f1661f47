import type { Transaction } from 'sequelize';
import type { Database } from '../database';
import { execute } from './statements';

// Adds to counter rows, set-based: one INSERT ... ON DUPLICATE KEY UPDATE (MariaDB, MySQL) or
// ON CONFLICT DO UPDATE (SQLite) per table for a whole transaction's deltas, the rows in key
// order, so that two writers of the same rows take their locks in one order and do not
// deadlock. `keys` are the table's primary key columns, `count` the column added to.
// A statement holds at most CHUNK rows (SQLite's limit on bound values).

const CHUNK = 500;

export async function addToCounters(
  db: Database,
  transaction: Transaction,
  table: string,
  keys: readonly string[],
  count: string,
  rows: ReadonlyArray<{ key: readonly (string | number)[]; delta: number }>,
): Promise<void> {
  const sorted = rows.filter((row) => row.delta !== 0).sort((a, b) => compareKeys(a.key, b.key));
  const onConflict =
    db.dialect === 'sqlite'
      ? `ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${count} = ${count} + excluded.${count}`
      : `ON DUPLICATE KEY UPDATE ${count} = ${count} + VALUES(${count})`;
  const placeholders = `(${[...keys, count].map(() => '?').join(', ')})`;
  for (let start = 0; start < sorted.length; start += CHUNK) {
    const chunk = sorted.slice(start, start + CHUNK);
    await execute(
      db,
      `INSERT INTO ${table} (${[...keys, count].join(', ')}) VALUES ${chunk.map(() => placeholders).join(', ')} ${onConflict}`,
      chunk.flatMap((row) => [...row.key, row.delta]),
      transaction,
    );
  }
}

function compareKeys(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] === b[i]) continue;
    return a[i]! < b[i]! ? -1 : 1;
  }
  return 0;
}
