import { randomUUID } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson, toDate, toIso } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select, skipLocked } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { recordEvents } from '../events/record-events';
import { currentSecrets } from './endpoint-secrets';
import { DISABLE_AFTER_MS } from './retry-schedule';
import type { SendOutcome } from './send-request';

// The webhook deliveries table as a queue: the dispatcher's claim, its record of an attempt,
// the hand-back of a lease, and the disabling of an endpoint that keeps failing. The
// dispatcher's loop (dispatcher.ts) calls these and holds no SQL of its own.
//
// Claims: SELECT ... FOR UPDATE SKIP LOCKED on MySQL/MariaDB, so two dispatchers never take the
// same row; on SQLite the transaction queue serialises claims. A claim sets a lease with a fresh
// token; the outcome is written only where the token still matches, so a dispatcher whose lease
// expired (it stalled, or died) cannot overwrite what the next one recorded.

export interface Claimed {
  deliveryId: string;
  endpointId: string;
  token: string;
  attempts: number;
  url: string;
  secrets: string[];
  accountId: string;
  event: { id: string; type: string; createdAt: string; accountId: string; data: unknown };
}

export interface ClaimLimits {
  // How many to claim at most, and per endpoint counting those already in flight here.
  free: number;
  perEndpoint: number;
  inFlightByEndpoint: ReadonlyMap<string, number>;
  leaseMs: number;
}

export async function claimDueDeliveries(db: Database, now: Date, limits: ClaimLimits): Promise<Claimed[]> {
  const claimed = await withTransaction(db, async (transaction) => {
    // A delivery waits for the earlier pending deliveries of its contact to the same
    // endpoint (order_key): per-contact order. The subqueries take no locks.
    const due = await select<{ id: string; endpoint_id: string }>(
      db,
      `SELECT d.id, d.endpoint_id FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
         AND d.endpoint_id IN (SELECT w.id FROM webhook_endpoints w WHERE w.enabled = ?)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
           AND p.order_key = d.order_key AND p.status = 'pending' AND p.event_seq < d.event_seq)
       ORDER BY d.next_attempt_at, d.event_seq LIMIT ${Math.max(limits.free * 4, 16)}${skipLocked(db)}`,
      [now, now, true],
      transaction,
    );
    const counts = new Map(limits.inFlightByEndpoint);
    const chosen: string[] = [];
    for (const row of due) {
      if (chosen.length >= limits.free) break;
      const count = counts.get(row.endpoint_id) ?? 0;
      if (count >= limits.perEndpoint) continue;
      counts.set(row.endpoint_id, count + 1);
      chosen.push(row.id);
    }
    if (chosen.length === 0) return { token: '', ids: [] as string[] };
    const token = randomUUID();
    await execute(
      db,
      'UPDATE webhook_deliveries SET lease_until = ?, claim_token = ? WHERE id IN (?)',
      [new Date(now.getTime() + limits.leaseMs), token, chosen],
      transaction,
    );
    return { token, ids: chosen };
  });
  if (claimed.ids.length === 0) return [];
  const rows = await select<{
    id: string;
    endpoint_id: string;
    attempts: number;
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: unknown;
    account_id: string;
    event_id: string;
    type: string;
    data: string;
    created_at: unknown;
  }>(
    db,
    `SELECT d.id, d.endpoint_id, d.attempts, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.account_id,
            e.id AS event_id, e.type, e.data, e.created_at
     FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
     WHERE d.id IN (?) AND d.claim_token = ?
     ORDER BY d.event_seq`,
    [claimed.ids, claimed.token],
  );
  return rows.map((row) => ({
    deliveryId: row.id,
    endpointId: row.endpoint_id,
    token: claimed.token,
    attempts: Number(row.attempts),
    url: row.url,
    secrets: currentSecrets(row, now),
    accountId: row.account_id,
    event: { id: row.event_id, type: row.type, createdAt: toIso(row.created_at), accountId: row.account_id, data: parseJson(row.data) },
  }));
}

// Not the receiver's fault (this dispatcher is stopping): the delivery goes back untouched, for
// another dispatcher to take at once.
export async function releaseDelivery(db: Database, claimed: Claimed): Promise<void> {
  await execute(db, 'UPDATE webhook_deliveries SET lease_until = NULL, claim_token = NULL WHERE id = ? AND claim_token = ?', [
    claimed.deliveryId,
    claimed.token,
  ]);
}

// One attempt and its outcome. nextAttemptAt null: it succeeded. Answers whether the endpoint
// was disabled by this failure.
export async function recordAttempt(
  db: Database,
  claimed: Claimed,
  outcome: SendOutcome,
  at: { now: Date; nextAttemptAt: Date | null },
): Promise<{ disabled: boolean }> {
  const { now, nextAttemptAt } = at;
  const attempt = claimed.attempts + 1;
  return withTransaction(db, async (transaction) => {
    await insertRows(
      db,
      'webhook_attempts',
      ['delivery_id', 'endpoint_id', 'event_id', 'attempt', 'response_status', 'error', 'duration_ms', 'next_attempt_at', 'created_at'],
      [[claimed.deliveryId, claimed.endpointId, claimed.event.id, attempt, outcome.status, outcome.error, outcome.durationMs, nextAttemptAt, now]],
      transaction,
    );
    await execute(
      db,
      `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, lease_until = NULL, claim_token = NULL
       WHERE id = ? AND claim_token = ?`,
      [nextAttemptAt === null ? 'succeeded' : 'pending', attempt, nextAttemptAt ?? now, claimed.deliveryId, claimed.token],
      transaction,
    );
    if (nextAttemptAt === null) {
      await execute(db, 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL', [claimed.endpointId], transaction);
      return { disabled: false };
    }
    return { disabled: await disableIfFailingTooLong(db, claimed, now, transaction) };
  });
}

// Three days of failures without one success: the endpoint is disabled, its pending
// deliveries stay (re-enabling sends them), and a webhook.disabled event says so.
async function disableIfFailingTooLong(db: Database, claimed: Claimed, now: Date, transaction: Transaction): Promise<boolean> {
  await execute(db, 'UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [now, claimed.endpointId], transaction);
  const [endpoint] = await select<{ enabled: unknown; failing_since: unknown; url: string }>(
    db,
    `SELECT enabled, failing_since, url FROM webhook_endpoints WHERE id = ?${forUpdate(db)}`,
    [claimed.endpointId],
    transaction,
  );
  if (!endpoint || !Number(endpoint.enabled) || endpoint.failing_since === null) return false;
  const failingSince = toDate(endpoint.failing_since);
  if (now.getTime() - failingSince.getTime() < DISABLE_AFTER_MS) return false;
  await execute(db, 'UPDATE webhook_endpoints SET enabled = ?, updated_at = ? WHERE id = ?', [false, now, claimed.endpointId], transaction);
  await recordEvents(db, claimed.accountId, [
    { type: 'webhook.disabled', data: { webhook: { id: claimed.endpointId, url: endpoint.url }, failingSince: failingSince.toISOString() } },
  ], transaction);
  return true;
}
