import { randomBytes, randomUUID } from 'node:crypto';
import { NotFoundError, ValidationError } from '../../errors/app-errors';
import type { Database } from '../../db/database';
import { parseJson, toIso, toIsoOrNull } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { normalizeId } from '../ids';
import { recordEvents } from '../events/record-events';
import { refuseDeletingUsedEndpoint } from '../sequences/endpoint-users';
import { checkWebhookUrl } from './address-policy';
import type { WebhookSettings } from './webhook-settings';

export const ROTATION_GRACE_MS = 24 * 3_600_000;

export interface Webhook {
  id: string;
  url: string;
  description: string | null;
  events: string[] | null;
  enabled: boolean;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  event_types: string | null;
  enabled: number | boolean;
  failing_since: unknown;
  previous_secret_expires_at: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, url, description, event_types, enabled, failing_since, previous_secret_expires_at, created_at, updated_at';

function toWebhook(row: EndpointRow, now: Date): Webhook {
  const expires = toIsoOrNull(row.previous_secret_expires_at);
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.event_types === null ? null : parseJson<string[]>(row.event_types),
    enabled: Boolean(Number(row.enabled)),
    failingSince: toIsoOrNull(row.failing_since),
    previousSecretExpiresAt: expires && new Date(expires) > now ? expires : null,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

// `whsec_` + standard base64 of 24 random bytes, the form the Standard Webhooks libraries take.
// Stored as is: the dispatcher must sign with it, so a hash will not do (see docs/webhooks.md).
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function eventsColumn(events: string[] | null | undefined): string | null {
  return events ? JSON.stringify([...new Set(events)].sort()) : null;
}

export async function createWebhook(
  db: Database,
  input: { accountId: string; url: string; events?: string[] | null; description?: string | null },
  settings: WebhookSettings,
): Promise<{ webhook: Webhook; secret: string }> {
  const url = checkWebhookUrl(input.url, settings.allowInsecure);
  const id = randomUUID();
  const secret = newSecret();
  const now = settings.now();
  await withTransaction(db, async (transaction) => {
    // Events committed before the endpoint existed are not sent to it.
    const [counter] = await select<{ last_seq: number | string }>(
      db,
      'SELECT last_seq FROM event_sequences WHERE account_id = ?',
      [input.accountId],
      transaction,
    );
    await insertRows(
      db,
      'webhook_endpoints',
      ['id', 'account_id', 'url', 'description', 'event_types', 'enabled', 'secret', 'cursor_seq', 'created_at', 'updated_at'],
      [[id, input.accountId, url, input.description ?? null, eventsColumn(input.events), true, secret, Number(counter?.last_seq ?? 0), now, now]],
      transaction,
    );
  });
  return { webhook: await getWebhook(db, { accountId: input.accountId, id }, settings), secret };
}

export async function listWebhooks(db: Database, input: { accountId: string }, settings: WebhookSettings): Promise<Webhook[]> {
  const rows = await select<EndpointRow>(
    db,
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`,
    [input.accountId],
  );
  const now = settings.now();
  return rows.map((row) => toWebhook(row, now));
}

export async function getWebhook(db: Database, input: { accountId: string; id: string }, settings: WebhookSettings): Promise<Webhook> {
  const id = normalizeId(input.id);
  const [row] = id
    ? await select<EndpointRow>(db, `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ? AND account_id = ?`, [id, input.accountId])
    : [];
  if (!row) throw new NotFoundError('Webhook');
  return toWebhook(row, settings.now());
}

export async function updateWebhook(
  db: Database,
  input: { accountId: string; id: string; url?: string; events?: string[] | null; enabled?: boolean; description?: string | null },
  settings: WebhookSettings,
): Promise<Webhook> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Webhook');
  const sets: string[] = [];
  const values: unknown[] = [];
  if (input.url !== undefined) {
    sets.push('url = ?');
    values.push(checkWebhookUrl(input.url, settings.allowInsecure));
  }
  if (input.events !== undefined) {
    sets.push('event_types = ?');
    values.push(eventsColumn(input.events));
  }
  if (input.description !== undefined) {
    sets.push('description = ?');
    values.push(input.description);
  }
  if (input.enabled !== undefined) {
    // Re-enabling starts the 3-day failure count afresh.
    sets.push(input.enabled ? 'enabled = ?, failing_since = NULL' : 'enabled = ?');
    values.push(input.enabled);
  }
  if (sets.length === 0) throw new ValidationError('Nothing to change', [{ path: '', message: 'give url, events, enabled or description' }]);
  await withTransaction(db, async (transaction) => {
    const [row] = await select<{ id: string }>(
      db,
      `SELECT id FROM webhook_endpoints WHERE id = ? AND account_id = ?${forUpdate(db)}`,
      [id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Webhook');
    await execute(db, `UPDATE webhook_endpoints SET ${sets.join(', ')}, updated_at = ? WHERE id = ?`, [...values, settings.now(), id], transaction);
  });
  return getWebhook(db, { accountId: input.accountId, id }, settings);
}

// Refused (409 webhook_in_use) while a webhook step of an active or paused sequence sends to it,
// checked after the endpoint's row is locked (why that is enough against concurrent sequence
// writes: src/services/sequences/endpoint-users.ts).
export async function deleteWebhook(db: Database, input: { accountId: string; id: string }): Promise<void> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Webhook');
  await withTransaction(db, async (transaction) => {
    const [row] = await select<{ id: string }>(
      db,
      `SELECT id FROM webhook_endpoints WHERE id = ? AND account_id = ?${forUpdate(db)}`,
      [id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Webhook');
    await refuseDeletingUsedEndpoint(db, input.accountId, id, transaction);
    // Attempts and deliveries go with it (ON DELETE CASCADE).
    await execute(db, 'DELETE FROM webhook_endpoints WHERE id = ?', [id], transaction);
  });
}

// A new secret; the current one stays valid for 24 h more, and meanwhile every delivery
// carries both signatures. A second rotation within the 24 h drops the oldest.
export async function rotateWebhookSecret(
  db: Database,
  input: { accountId: string; id: string },
  settings: WebhookSettings,
): Promise<{ webhook: Webhook; secret: string }> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Webhook');
  const secret = newSecret();
  const now = settings.now();
  await withTransaction(db, async (transaction) => {
    const [row] = await select<{ id: string }>(
      db,
      `SELECT id FROM webhook_endpoints WHERE id = ? AND account_id = ?${forUpdate(db)}`,
      [id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Webhook');
    await execute(
      db,
      'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ? WHERE id = ?',
      [new Date(now.getTime() + ROTATION_GRACE_MS), secret, now, id],
      transaction,
    );
  });
  return { webhook: await getWebhook(db, { accountId: input.accountId, id }, settings), secret };
}

// Records a webhook.test event for this endpoint alone (fan-out sends it only there).
export async function sendTestEvent(
  db: Database,
  input: { accountId: string; id: string },
): Promise<{ eventId: string }> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Webhook');
  return withTransaction(db, async (transaction) => {
    const [row] = await select<{ id: string }>(
      db,
      'SELECT id FROM webhook_endpoints WHERE id = ? AND account_id = ?',
      [id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Webhook');
    const [event] = await recordEvents(db, input.accountId, [{ type: 'webhook.test', data: { webhookId: id } }], transaction);
    return { eventId: event!.id };
  });
}

export interface DeliveryAttempt {
  id: number;
  eventId: string;
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
  nextAttemptAt: string | null;
  createdAt: string;
}

// Newest first; the cursor is the last attempt's id of the previous page.
export async function listDeliveryAttempts(
  db: Database,
  input: { accountId: string; id: string; limit: number; cursor?: string },
  settings: WebhookSettings,
): Promise<{ attempts: DeliveryAttempt[]; nextCursor: string | null }> {
  const webhook = await getWebhook(db, input, settings);
  const before = input.cursor === undefined ? null : Number(input.cursor);
  if (before !== null && !(Number.isSafeInteger(before) && before > 0)) {
    throw new ValidationError('Invalid cursor', [{ path: 'cursor', message: 'must be a nextCursor from a previous page' }]);
  }
  const rows = await select<{
    id: number | string;
    event_id: string;
    attempt: number;
    response_status: number | null;
    error: string | null;
    duration_ms: number;
    next_attempt_at: unknown;
    created_at: unknown;
  }>(
    db,
    `SELECT id, event_id, attempt, response_status, error, duration_ms, next_attempt_at, created_at FROM webhook_attempts
     WHERE endpoint_id = ?${before === null ? '' : ' AND id < ?'} ORDER BY id DESC LIMIT ?`,
    before === null ? [webhook.id, input.limit + 1] : [webhook.id, before, input.limit + 1],
  );
  const page = rows.slice(0, input.limit);
  return {
    attempts: page.map((row) => ({
      id: Number(row.id),
      eventId: row.event_id,
      attempt: Number(row.attempt),
      responseStatus: row.response_status === null ? null : Number(row.response_status),
      error: row.error,
      durationMs: Number(row.duration_ms),
      succeeded: row.error === null && row.response_status !== null && Number(row.response_status) < 300,
      nextAttemptAt: toIsoOrNull(row.next_attempt_at),
      createdAt: toIso(row.created_at),
    })),
    nextCursor: rows.length > input.limit ? String(page[page.length - 1]!.id) : null,
  };
}
