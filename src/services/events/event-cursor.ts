import { ValidationError } from '../../errors/app-errors';

// The feed's cursor: opaque to integrators, a position in the account's `seq` order here.
// Versioned, so that its form can change without breaking stored cursors.

const PREFIX = 'ev1:';

export function encodeCursor(seq: number): string {
  return Buffer.from(`${PREFIX}${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = /^[A-Za-z0-9_-]{1,40}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^ev1:(0|[1-9]\d{0,15})$/.exec(text);
  const seq = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new ValidationError('after: Not a cursor this feed returned', [
      { path: 'after', message: 'Not a cursor this feed returned' },
    ]);
  }
  return seq;
}
