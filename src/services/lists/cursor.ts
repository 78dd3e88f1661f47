import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors/app-errors';

// The opaque cursors of every list: the position of a row (its sort value and id) and a check
// value over that position, the list, the account and the filters. A cursor that continues a
// settled walk (src/services/lists/settled-walk.ts) also carries the walk's horizon.
//
// The check is a plain hash, not a secret-keyed one, on purpose: a cursor only positions a walk
// inside the caller's own rows (every statement is scoped to the account by the key, never by
// the cursor), and a settled walk never goes past the horizon its own clock allows, whatever a
// cursor says; so a forged cursor can reveal nothing. What the check gives is a clear 400 for a
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

// 1: a position. 2: a position inside a settled walk, and that walk's horizon (ms).
const POSITION = 1;
const IN_WALK = 2;
const INVALID = 'Invalid cursor: pass the nextCursor of the previous page of the same list, with the same filters and sort';

function check(scope: CursorScope, version: number, position: Position, horizon?: number): string {
  const filters = Object.entries(scope.filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const fields = [version, scope.list, scope.accountId, filters, position.at, position.id, ...(horizon === undefined ? [] : [horizon])];
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url').slice(0, 22);
}

export function encodeCursor(scope: CursorScope, position: Position): string {
  return Buffer.from(JSON.stringify([POSITION, position.at, position.id, check(scope, POSITION, position)])).toString('base64url');
}

export function encodeWalkCursor(scope: CursorScope, position: Position, horizon: number): string {
  const fields = [IN_WALK, position.at, position.id, horizon, check(scope, IN_WALK, position, horizon)];
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

export function decodeCursor(scope: CursorScope, cursor: string, invalid = INVALID): Position {
  const decoded = decodeAny(scope, cursor, invalid);
  if (decoded.horizon !== undefined) throw invalidCursor(invalid);
  return decoded.position;
}

// Either kind: a position (a walk starts there) or a position inside a walk.
export function decodeWalkCursor(scope: CursorScope, cursor: string, invalid: string): { position: Position; horizon?: number } {
  return decodeAny(scope, cursor, invalid);
}

function decodeAny(scope: CursorScope, cursor: string, invalid: string): { position: Position; horizon?: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(invalid);
  }
  if (!Array.isArray(parsed)) throw invalidCursor(invalid);
  const [version, at, id] = parsed as unknown[];
  const inWalk = version === IN_WALK && parsed.length === 5;
  if (!inWalk && !(version === POSITION && parsed.length === 4)) throw invalidCursor(invalid);
  const horizon = inWalk ? (parsed[3] as unknown) : undefined;
  const mac = parsed[parsed.length - 1] as unknown;
  if (!Number.isSafeInteger(at) || typeof id !== 'string' || typeof mac !== 'string') throw invalidCursor(invalid);
  if (inWalk && !Number.isSafeInteger(horizon)) throw invalidCursor(invalid);
  const position = { at: at as number, id };
  if (mac !== check(scope, version as number, position, horizon as number | undefined)) throw invalidCursor(invalid);
  return { position, ...(inWalk && { horizon: horizon as number }) };
}

function invalidCursor(message: string): ValidationError {
  return new ValidationError(`cursor: ${message}`, [{ path: 'cursor', message }]);
}
