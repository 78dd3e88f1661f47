import { createHash } from 'node:crypto';
import { UniqueConstraintError, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { canonicalJson } from './canonical-json';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
// How long an answer is kept and replayed.
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
// A request that holds a claim commits nothing after its deadline, this long after its claim
// (src/db/sql/write-deadline.ts: a transaction that reaches its COMMIT later is rolled back, and
// the request answers 503 Database busy).
export const IDEMPOTENT_REQUEST_DEADLINE_MS = 10_000;
// What a COMMIT sent just before the deadline may still take: the statement deadline
// (DB_QUERY_TIMEOUT_MS), past which its connection is closed.
export const DEFAULT_COMMIT_MARGIN_MS = 3_000;
// The upper bound of a claim's life, whatever the deadline and the margin add up to. (It was the
// claim's life itself, 60 s, until a claim lasted only as long as its request can.)
export const IDEMPOTENCY_CLAIM_TIMEOUT_MS = 60_000;

// How long an unfinished claim holds its key: no longer than its request can run (its deadline,
// plus the margin for the COMMIT it sent before it). Past it the request cannot commit any more,
// so only a crashed instance's claim, or one whose release could not reach the database, is
// still there; a retry takes it and runs.
export function claimLifetimeMs(deadlineMs = IDEMPOTENT_REQUEST_DEADLINE_MS, commitMarginMs = DEFAULT_COMMIT_MARGIN_MS): number {
  return Math.min(deadlineMs + commitMarginMs, IDEMPOTENCY_CLAIM_TIMEOUT_MS);
}

export interface StoredAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

// lockedUntil: the claim's end as stored; it names this claim's row (a later claim of the same
// key, once this one is gone, has its own), so that a release deletes only its own.
export type Claim =
  | { kind: 'claimed'; lockedUntil: Date }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'in_progress' }
  | { kind: 'reused' };

interface ClaimInput {
  accountId: string;
  key: string;
  requestHash: string;
  now?: Date;
  // The claim's end: now + claimLifetimeMs() unless given.
  lockedUntil?: Date;
}

// "The same request": method, path and the body as a JSON value.
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body)}`).digest('hex');
}

interface KeyRow {
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  response_headers: string | null;
  operation_result: string | null;
  locked_until: Date | string;
}

// Every statement runs in a transaction, the one way the service writes (on SQLite that queues
// it behind other requests' transactions on the shared connection).
// Claims the key by inserting its row: the primary key (account, key) lets one request of any
// number of concurrent ones in. A clash is answered from the row that won. A stale row (expired,
// or an unfinished claim past its timeout whose operation committed nothing) is deleted and the
// claim tried once more. A row whose operation committed its result but whose answer was never
// stored (a crash, a 503 after the COMMIT) lets the request run again: the operation answers
// from that result and does nothing twice (key-in-transaction.ts).
export async function claimIdempotencyKey(db: Database, input: ClaimInput): Promise<Claim> {
  const now = input.now ?? new Date();
  const lockedUntil = input.lockedUntil ?? new Date(now.getTime() + claimLifetimeMs());
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await withTransaction(db, async (transaction) => {
        await purgeExpiredIdempotencyKeys(db, now, transaction);
        await execute(
          db,
          'INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, locked_until, expires_at) VALUES (?, ?, ?, ?, ?)',
          [input.accountId, input.key, input.requestHash, lockedUntil, new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS)],
          transaction,
        );
      });
      return { kind: 'claimed', lockedUntil };
    } catch (error) {
      if (!(error instanceof UniqueConstraintError)) throw error;
    }
    const row = await withTransaction(db, async (transaction) => {
      await execute(
        db,
        `DELETE FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?
           AND (expires_at <= ? OR (status_code IS NULL AND operation_result IS NULL AND locked_until <= ?))`,
        [input.accountId, input.key, now, now],
        transaction,
      );
      const [found] = await select<KeyRow>(
        db,
        'SELECT request_hash, status_code, response_body, response_headers, operation_result, locked_until FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?',
        [input.accountId, input.key],
        transaction,
      );
      return found;
    });
    if (!row) continue;
    if (row.request_hash !== input.requestHash) return { kind: 'reused' };
    if (row.status_code === null) {
      return row.operation_result === null ? { kind: 'in_progress' } : { kind: 'claimed', lockedUntil: new Date(row.locked_until) };
    }
    return {
      kind: 'replay',
      answer: { status: Number(row.status_code), body: row.response_body ?? '', headers: JSON.parse(row.response_headers ?? '{}') },
    };
  }
  // Another request took the freed key between our DELETE and INSERT: it is running now.
  return { kind: 'in_progress' };
}

export async function storeIdempotentAnswer(db: Database, input: { accountId: string; key: string; answer: StoredAnswer }): Promise<void> {
  await withTransaction(db, (transaction) =>
    execute(
      db,
      'UPDATE idempotency_keys SET status_code = ?, response_body = ?, response_headers = ? WHERE account_id = ? AND idempotency_key = ?',
      [input.answer.status, input.answer.body, JSON.stringify(input.answer.headers), input.accountId, input.key],
      transaction,
    ),
  );
}

// The request failed in a way worth retrying (5xx) or was not really answered (401, 429): the
// key is free again, unless its operation committed a result (a 503 cut the COMMIT's answer,
// not the COMMIT): then a retry answers from it. On MySQL the DELETE waits for the row's lock,
// which that transaction holds until its COMMIT is applied or rolled back, so it reads the
// outcome, never the state before it. So a release, however late, never frees a key whose
// operation committed. Given lockedUntil, only that claim's row is deleted: a late release
// (retried after an outage, src/services/idempotency/claim-releases.ts) leaves alone the claim
// of a retry that took the key once this one had expired.
export async function releaseIdempotencyKey(db: Database, input: { accountId: string; key: string; lockedUntil?: Date }): Promise<void> {
  const own = input.lockedUntil ? ' AND locked_until = ?' : '';
  await withTransaction(db, (transaction) =>
    execute(
      db,
      `DELETE FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? AND status_code IS NULL AND operation_result IS NULL${own}`,
      input.lockedUntil ? [input.accountId, input.key, input.lockedUntil] : [input.accountId, input.key],
      transaction,
    ),
  );
}

// Purged on write: every claim first deletes the keys that expired since the last one (by the
// expires_at index), so the table holds about 24 h of keys and no timer is needed.
async function purgeExpiredIdempotencyKeys(db: Database, now: Date, transaction: Transaction): Promise<void> {
  await execute(db, 'DELETE FROM idempotency_keys WHERE expires_at <= ?', [now], transaction);
}
