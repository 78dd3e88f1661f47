import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { PROVIDER_STATUSES, type ProviderStatus } from '../../schemas/message';
import type { MessageMetrics } from './message-metrics';
import { applyProviderStatuses, type ProviderStatusUpdate } from './provider-statuses';

// WhatsApp's status webhook (docs/messages.md "The status webhook"): Meta POSTs what became of
// the messages a business number sent (sent, delivered, read, failed), signed with the app's
// secret. The transport (src/http/whatsapp-webhook.ts) checks the signature over the raw body;
// this reads Meta's payload and applies its statuses to the messages, forward only.

// `sha256=<hex>`: HMAC-SHA256 of the raw body with WHATSAPP_APP_SECRET, compared in constant time.
export function validMetaSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length).trim(), 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// Constant time too: the verify token is a shared secret.
export function sameSecret(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'verify-token').update(given).digest();
  const b = createHmac('sha256', 'verify-token').update(expected).digest();
  return timingSafeEqual(a, b);
}

const KNOWN: ReadonlySet<string> = new Set(PROVIDER_STATUSES);
// Meta's timestamps are Unix seconds; one from before 2020 or a day ahead is not believed.
const EARLIEST = Date.UTC(2020, 0, 1);
const AHEAD_MS = 86_400_000;

// The statuses of a payload: entry[].changes[].value.statuses[]. Anything else Meta sends on the
// same subscription (incoming messages, template updates) and statuses this service does not
// keep (`deleted`, `warning`) are passed over.
export function statusUpdatesOf(payload: unknown, now: Date): ProviderStatusUpdate[] {
  const updates: ProviderStatusUpdate[] = [];
  for (const entry of arrayAt(payload, 'entry')) {
    for (const change of arrayAt(entry, 'changes')) {
      const value = objectAt(change, 'value');
      for (const status of arrayAt(value, 'statuses')) {
        const update = statusUpdate(status, now);
        if (update) updates.push(update);
      }
    }
  }
  return updates;
}

function statusUpdate(raw: unknown, now: Date): ProviderStatusUpdate | null {
  if (!raw || typeof raw !== 'object') return null;
  const status = raw as Record<string, unknown>;
  if (typeof status.id !== 'string' || status.id.length === 0 || status.id.length > 191) return null;
  if (typeof status.status !== 'string' || !KNOWN.has(status.status)) return null;
  const seconds = Number(status.timestamp);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : NaN;
  const at = ms >= EARLIEST && ms <= now.getTime() + AHEAD_MS ? new Date(ms) : now;
  const key = status.biz_opaque_callback_data;
  return {
    channel: 'whatsapp',
    providerMessageId: status.id,
    messageKey: typeof key === 'string' && key.length > 0 && key.length <= 191 ? key : null,
    status: status.status as ProviderStatus,
    at,
    error: status.status === 'failed' ? errorOf(status.errors) : null,
  };
}

// `131026: Message undeliverable (details)`, from the first of `errors`.
function errorOf(errors: unknown): string {
  const first = Array.isArray(errors) ? (errors[0] as Record<string, unknown> | undefined) : undefined;
  if (!first || typeof first !== 'object') return 'failed: no error given';
  const code = typeof first.code === 'number' || typeof first.code === 'string' ? String(first.code) : 'failed';
  const text = typeof first.title === 'string' ? first.title : typeof first.message === 'string' ? first.message : 'error';
  const details = (first.error_data as { details?: unknown } | undefined)?.details;
  return `${code}: ${text}${typeof details === 'string' ? ` (${details})` : ''}`.slice(0, 1000);
}

function arrayAt(value: unknown, key: string): unknown[] {
  const found = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return Array.isArray(found) ? found : [];
}

function objectAt(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

// A transaction per chunk: a payload of thousands of statuses is not one statement of
// thousands of ids. Each chunk is whole or nothing; one that failed is applied again when Meta
// retries the post, and the chunks already applied change nothing then.
const CHUNK = 500;

export async function applyWhatsAppStatuses(
  db: Database,
  updates: readonly ProviderStatusUpdate[],
  options: { now: Date; metrics?: MessageMetrics },
): Promise<{ received: number; applied: number; unknown: number }> {
  let applied = 0;
  let unknown = 0;
  for (let start = 0; start < updates.length; start += CHUNK) {
    const chunk = updates.slice(start, start + CHUNK);
    const result = await withTransaction(db, (transaction) => applyProviderStatuses(db, chunk, options, transaction));
    applied += result.transitions.length;
    unknown += result.unknown;
  }
  return { received: updates.length, applied, unknown };
}
