import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors/app-errors';

// The opaque `nextCursor` of every list: the position of the page's last row (its sort value
// and id) and a check value over that position, the list, the account and the filters.
//
// The check is a plain hash, not a secret-keyed one, on purpose: a cursor only positions a walk
// inside the caller's own rows (every statement is scoped to the account by the key, never by
// the cursor), so a forged cursor can reveal nothing. What the check gives is a clear 400 for a
// cursor that was mistyped, edited, or issued for another account, list, filter or sort,
// instead of a page from some other walk.

export interface Position {
  // Milliseconds since the epoch of the sort column.
  at: number;
  id: string;
}

// What a cursor is valid for: the list and everything that selects or orders its rows.
export interface CursorScope {
  list: string;
  accountId: string;
  filters: Record<string, unknown>;
}

const VERSION = 1;
const INVALID = 'Invalid cursor: pass the nextCursor of the previous page of the same list, with the same filters and sort';

function check(scope: CursorScope, position: Position): string {
  const filters = Object.entries(scope.filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const text = JSON.stringify([VERSION, scope.list, scope.accountId, filters, position.at, position.id]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

export function encodeCursor(scope: CursorScope, position: Position): string {
  return Buffer.from(JSON.stringify([VERSION, position.at, position.id, check(scope, position)])).toString('base64url');
}

export function decodeCursor(scope: CursorScope, cursor: string): Position {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw invalidCursor();
  const [version, at, id, mac] = parsed as unknown[];
  if (version !== VERSION || !Number.isSafeInteger(at) || typeof id !== 'string' || typeof mac !== 'string') {
    throw invalidCursor();
  }
  const position = { at: at as number, id };
  if (mac !== check(scope, position)) throw invalidCursor();
  return position;
}

function invalidCursor(): ValidationError {
  return new ValidationError(`cursor: ${INVALID}`, [{ path: 'cursor', message: INVALID }]);
}
