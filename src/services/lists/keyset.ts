import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { decodeCursor, encodeCursor, type CursorScope, type Position } from './cursor';

// Keyset pagination shared by every list: rows come ordered by (sort column, id), both in one
// direction, and a page starts strictly after the previous page's last row. The condition is
// an OR of two ranges, behind a plain range on the sort column that says the same more
// loosely: with it MariaDB always reads the index from the cursor on (without it, it may walk
// from the index's start and filter, or pick the plain order index over a filter's own).

export type Direction = 'ASC' | 'DESC';

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function afterPosition(
  sortColumn: string,
  idColumn: string,
  direction: Direction,
  position: Position | null,
): { sql: string; values: unknown[] } {
  if (!position) return { sql: '', values: [] };
  const op = direction === 'DESC' ? '<' : '>';
  const at = new Date(position.at);
  return {
    sql: ` AND ${sortColumn} ${op}= ? AND (${sortColumn} ${op} ? OR (${sortColumn} = ? AND ${idColumn} ${op} ?))`,
    values: [at, at, at, position.id],
  };
}

// A table read through the named index, and no other. Each list query's index is chosen by
// design (db/migrations/20261202000000-create-list-indexes.js), not left to the optimizer:
// MariaDB, given ORDER BY ... LIMIT, may read an order index from its start through the
// account prefix alone (a `ref`) and filter up to the cursor, which costs the page's position
// in the walk, or prefer the plain order index to a filter's own. Named, it reads the range
// from the cursor on.
export function readThrough(db: Database, table: string, alias: string, index: string): string {
  return db.dialect === 'sqlite' ? `${table} ${alias} INDEXED BY ${index}` : `${table} ${alias} FORCE INDEX (${index})`;
}

export function orderBy(sortColumn: string, idColumn: string, direction: Direction): string {
  return ` ORDER BY ${sortColumn} ${direction}, ${idColumn} ${direction}`;
}

// invalid: the 400's text for a cursor this list did not issue; the common one unless given.
export function startPosition(scope: CursorScope, request: PageRequest, invalid?: string): Position | null {
  return request.cursor === undefined ? null : decodeCursor(scope, request.cursor, invalid);
}

// rows: up to limit + 1 rows read in the list's order; the extra one only says that another
// page exists.
export function toPage<Row, T>(
  scope: CursorScope,
  request: PageRequest,
  rows: Row[],
  read: { position: (row: Row) => { at: unknown; id: string }; item: (row: Row) => T },
): Page<T> {
  const more = rows.length > request.limit;
  const pageRows = more ? rows.slice(0, request.limit) : rows;
  let nextCursor: string | null = null;
  if (more) {
    const last = read.position(pageRows[pageRows.length - 1]);
    nextCursor = encodeCursor(scope, { at: toDate(last.at).getTime(), id: last.id });
  }
  return { items: pageRows.map(read.item), nextCursor };
}
