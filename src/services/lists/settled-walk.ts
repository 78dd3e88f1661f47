import { toDate } from '../../db/sql/rows';
import { decodeWalkCursor, encodeCursor, encodeWalkCursor, type CursorScope, type Position } from './cursor';
import type { Page, PageRequest } from './keyset';

// A walk in the order of last change (sort column, id ascending), for incremental sync, that
// ends, serves each row at most once, and skips no change.
//
// A change becomes visible at COMMIT, a little after it took its timestamp. So a walk serves
// only rows changed before its horizon, settleMs before the walk began: every write that took
// an earlier timestamp had committed when the walk began (writers take the timestamp once they
// hold their locks, so settleMs is what the remaining statements and the clocks of two
// instances can differ by), and every later write takes a later one. The rows before the
// horizon are therefore final for the whole walk: rows leave them (changed again, or deleted)
// but none arrive. The walk's pages carry the horizon in nextCursor, so a row changed during
// the walk is not served again in it; the walk's last page hands out a resumeCursor at the
// horizon, from which a later walk serves every change since, up to a later horizon.

export interface SettleClock {
  settleMs: number;
  now: () => Date;
}

export interface SyncState {
  // Set on the walk's last page only: the cursor a later walk starts from.
  resumeCursor: string | null;
  // Every row changed before this instant has been served, by this walk or earlier ones.
  caughtUpTo: string | null;
  // From this long after the answer, every change made before it can be served.
  retryAfterMs: number | null;
}

export type SettledPage<T> = Page<T> & { sync: SyncState };

export interface SettledStart {
  start: Position | null;
  horizon: number;
}

// The page's start and its walk's horizon: a new walk's (no cursor, or a resumeCursor) is
// settleMs before now; a walk in progress keeps its own, yet never one later than this clock
// allows (a forged or skewed cursor can only make the walk stop sooner).
export function settledStart(scope: CursorScope, request: PageRequest, clock: SettleClock, invalid: string): SettledStart {
  const latest = clock.now().getTime() - clock.settleMs;
  if (request.cursor === undefined) return { start: null, horizon: latest };
  const { position, horizon } = decodeWalkCursor(scope, request.cursor, invalid);
  return { start: position, horizon: horizon === undefined ? latest : Math.min(horizon, latest) };
}

// Nothing lies between the start and the horizon: the page needs no read.
export function pastHorizon({ start, horizon }: SettledStart): boolean {
  return start !== null && start.at >= horizon;
}

export function beforeHorizon(sortColumn: string, horizon: number): { sql: string; values: unknown[] } {
  return { sql: ` AND ${sortColumn} < ?`, values: [new Date(horizon)] };
}

// rows: up to limit + 1 rows before the horizon, in the walk's order.
export function toSettledPage<Row, T>(
  scope: CursorScope,
  request: PageRequest,
  rows: Row[],
  walk: SettledStart & { settleMs: number },
  read: { position: (row: Row) => { at: unknown; id: string }; item: (row: Row) => T },
): SettledPage<T> {
  const more = rows.length > request.limit;
  const pageRows = more ? rows.slice(0, request.limit) : rows;
  const items = pageRows.map(read.item);
  if (more) {
    const last = read.position(pageRows[pageRows.length - 1]);
    const position = { at: toDate(last.at).getTime(), id: last.id };
    return {
      items,
      nextCursor: encodeWalkCursor(scope, position, walk.horizon),
      sync: { resumeCursor: null, caughtUpTo: null, retryAfterMs: null },
    };
  }
  // Every row before the horizon has been served; the next walk starts at it (the empty id
  // sorts before every id, so the rows at the horizon itself come then). A start beyond the
  // horizon (a resumeCursor passed back sooner than settleMs later) stays where it is.
  const resume = pastHorizon(walk) ? walk.start! : { at: walk.horizon, id: '' };
  return {
    items,
    nextCursor: null,
    sync: { resumeCursor: encodeCursor(scope, resume), caughtUpTo: new Date(resume.at).toISOString(), retryAfterMs: walk.settleMs },
  };
}
