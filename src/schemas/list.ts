import { z } from 'zod';
import { text } from './text';

// What every list takes and answers (issue 9, "Precise shapes the lists share").

export const MAX_LIST_LIMIT = 200;
export const DEFAULT_LIST_LIMIT = 50;

const LIMIT_PROBLEM = `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`;

// On REST the adapter coerces query strings to numbers before this runs.
export const limitSchema = z
  .number({ error: LIMIT_PROBLEM })
  .int(LIMIT_PROBLEM)
  .min(1, LIMIT_PROBLEM)
  .max(MAX_LIST_LIMIT, LIMIT_PROBLEM)
  .default(DEFAULT_LIST_LIMIT)
  .describe(`Items per page, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`);

export const cursorSchema = text()
  .min(1, 'cursor must not be empty')
  .max(512, 'cursor is too long')
  .optional()
  .describe(
    'The `nextCursor` of the previous page, as given. Valid only for the same list with the same filters and sort; ' +
      'any other cursor is a 400.',
  );

export const pageInputSchema = z.object({ limit: limitSchema, cursor: cursorSchema });

export const nextCursorSchema = z
  .string()
  .nullable()
  .describe('Pass it as `cursor` for the next page; null on the last page.')
  .meta({ example: 'eyJrIjpbIjIwMjYtMTEtMjJUMDk6MzA6MDAuMDAwWiIsIjNmMWMyYTllIl19' });

// The answer of a sort=updatedAt page besides nextCursor (src/services/lists/settled-walk.ts):
// what tells "caught up" from "there is more", and where a later walk starts.
export const syncFieldsSchema = z.object({
  resumeCursor: z
    .string()
    .nullable()
    .optional()
    .describe(
      'Only with `sort=updatedAt`. On the walk\'s last page (`nextCursor` null): keep it, and pass it later as `cursor` ' +
        '(with the same filters and sort) to receive every change made since, each once. Null while `nextCursor` is set.',
    )
    .meta({ example: 'WzEsMTc2NDAyMzM5NTAwMCwiIiwia1AzdlE5eFpyMkxtVDhhWXcxYk4wYyJd' }),
  caughtUpTo: z
    .string()
    .nullable()
    .optional()
    .describe(
      'Only with `sort=updatedAt`. On the walk\'s last page: every contact changed before this instant has been listed, ' +
        'in this walk or the earlier ones its cursor continues; changes after it are listed once they are settled ' +
        '(a few seconds old). Null while `nextCursor` is set.',
    )
    .meta({ example: '2025-11-24T22:29:55.000Z' }),
  retryAfterMs: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      'Only with `sort=updatedAt`. On the walk\'s last page: from this many milliseconds on, every change made before ' +
        'this answer can be listed; a sooner request gets only the part that has settled. Null while `nextCursor` is set.',
    )
    .meta({ example: 5000 }),
});

// ISO 8601 with a zone (Z or an offset), any precision; compared after conversion to UTC.
export function instantSchema(name: string) {
  return z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time with a zone, e.g. 2026-11-21T09:30:00.000Z` })
    .optional();
}

// A query flag: the words true and false, the same on REST and tRPC.
export const flagSchema = z.enum(['true', 'false'], { error: 'Must be true or false' });
