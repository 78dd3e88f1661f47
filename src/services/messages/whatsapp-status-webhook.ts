import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { NewEventOf } from '../../schemas/event';
import { PROVIDER_STATUSES, type ProviderStatus } from '../../schemas/message';
import { recordEvents } from '../events/record-events';
import type { MessageTransition } from './message-events';
import type { MessageMetrics } from './message-metrics';
import { applyProviderStatuses, type ProviderStatusUpdate } from './provider-statuses';
import type { WhatsAppInboundMetrics } from './whatsapp-inbound-metrics';
import {
  failureCodeOf,
  OPTED_OUT_CODE,
  recordWhatsAppRecipientFailures,
  resetWhatsAppRecipientFailures,
  UNDELIVERABLE_CODE,
  type WhatsAppRecipientFailure,
} from './whatsapp-recipient-failures';

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

// The statuses of a payload: entry[].changes[].value.statuses[]. Incoming messages are read by
// whatsapp-inbound.ts; anything else Meta sends on the same subscription (template updates) and
// statuses this service does not keep (`deleted`, `warning`) are passed over.
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

// Meta's Unix seconds as a time, when believable; else now.
export function metaTime(timestamp: unknown, now: Date): Date {
  const seconds = Number(timestamp);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : NaN;
  return ms >= EARLIEST && ms <= now.getTime() + AHEAD_MS ? new Date(ms) : now;
}

function statusUpdate(raw: unknown, now: Date): ProviderStatusUpdate | null {
  if (!raw || typeof raw !== 'object') return null;
  const status = raw as Record<string, unknown>;
  if (typeof status.id !== 'string' || status.id.length === 0 || status.id.length > 191) return null;
  if (typeof status.status !== 'string' || !KNOWN.has(status.status)) return null;
  const at = metaTime(status.timestamp, now);
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

export function arrayAt(value: unknown, key: string): unknown[] {
  const found = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return Array.isArray(found) ? found : [];
}

export function objectAt(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

// A transaction per chunk: a payload of thousands of statuses is not one statement of
// thousands of ids. Each chunk is whole or nothing; one that failed is applied again when Meta
// retries the post, and the chunks already applied change nothing then.
const CHUNK = 500;

// Which messages' accounts the post's signature speaks for (whatsapp-webhook-post.ts): an
// account with its own app secret only for a post signed with it; the others only for one
// signed with WHATSAPP_APP_SECRET. A status naming another account's message is passed over
// (counted unknown): a tenant's own secret never reaches another tenant's messages.
export type TrustedAccount = (accountId: string, ownSecret: boolean) => boolean;

export async function applyWhatsAppStatuses(
  db: Database,
  updates: readonly ProviderStatusUpdate[],
  options: { now: Date; metrics?: MessageMetrics; inbound?: WhatsAppInboundMetrics; trusted: TrustedAccount },
): Promise<{ received: number; applied: number; unknown: number; trusted: ProviderStatusUpdate[] }> {
  let applied = 0;
  let unknown = 0;
  // The updates the signature speaks for (applied or not: a repeat changes nothing, and its
  // engagement signal is recorded again as a no-op, src/services/signals/whatsapp-signals.ts).
  const trusted: ProviderStatusUpdate[] = [];
  for (let start = 0; start < updates.length; start += CHUNK) {
    const chunk = updates.slice(start, start + CHUNK);
    const result = await withTransaction(db, async (transaction) => {
      const allowed = await trustedUpdates(db, chunk, options.trusted, transaction);
      const events = new Map<string, NewEventOf[]>();
      const outcome = await applyProviderStatuses(db, allowed, { now: options.now, metrics: options.metrics, events }, transaction);
      await recordRecipientOutcomes(db, outcome.transitions, { now: options.now, metrics: options.inbound, events }, transaction);
      for (const accountId of [...events.keys()].sort()) await recordEvents(db, accountId, events.get(accountId)!, transaction);
      return { ...outcome, unknown: outcome.unknown + chunk.length - allowed.length, allowed };
    });
    applied += result.transitions.length;
    unknown += result.unknown;
    trusted.push(...result.allowed);
  }
  return { received: updates.length, applied, unknown, trusted };
}

// The updates whose message belongs to an account the signature speaks for, or that name no
// message at all (counted unknown as before): the messages read by provider id and by key (an
// index range each, as applyProviderStatuses reads them), then which of their accounts have
// their own app secret.
async function trustedUpdates(db: Database, updates: readonly ProviderStatusUpdate[], trusted: TrustedAccount, transaction: Transaction) {
  const ids = [...new Set(updates.map((update) => update.providerMessageId))];
  const keys = [...new Set(updates.flatMap((update) => (update.messageKey ? [update.messageKey] : [])))];
  const byId = await select<{ provider_message_id: string; account_id: string }>(
    db,
    "SELECT provider_message_id, account_id FROM messages WHERE channel = 'whatsapp' AND provider_message_id IN (?)",
    [ids],
    transaction,
  );
  const byKey =
    keys.length === 0
      ? []
      : await select<{ message_key: string; account_id: string }>(db, "SELECT message_key, account_id FROM messages WHERE message_key IN (?) AND channel = 'whatsapp'", [keys], transaction);
  const accounts = [...new Set([...byId, ...byKey].map((row) => row.account_id))];
  const own = new Set(
    accounts.length === 0
      ? []
      : (
          await select<{ account_id: string }>(db, 'SELECT account_id FROM whatsapp_channels WHERE account_id IN (?) AND app_secret_secret IS NOT NULL', [accounts], transaction)
        ).map((row) => row.account_id),
  );
  const allowed = (accountId: string) => trusted(accountId, own.has(accountId));
  const idAccount = new Map(byId.map((row) => [row.provider_message_id, row.account_id]));
  const keyAccount = new Map(byKey.map((row) => [row.message_key, row.account_id]));
  return updates.filter((update) => {
    const accountId = idAccount.get(update.providerMessageId) ?? (update.messageKey ? keyAccount.get(update.messageKey) : undefined);
    return accountId === undefined || allowed(accountId);
  });
}

// What the statuses say about the recipients: 131050 opts the number out, 131026 counts
// towards `invalid`, a delivered or read starts the count again (whatsapp-recipient-failures.ts).
// A number's failures from before its latest delivered or read message are passed over. In the
// statuses' transaction, so that a status applied is never without its effect on the contact
// (Meta's retry would find nothing left to apply). The contacts are locked after the messages
// here, unlike the engine's order: the rare deadlock with an engine recording the same message
// is rolled back and run again whole by withTransaction.
async function recordRecipientOutcomes(
  db: Database,
  transitions: readonly MessageTransition[],
  options: { now: Date; metrics?: WhatsAppInboundMetrics; events: Map<string, NewEventOf[]> },
  transaction: Transaction,
): Promise<void> {
  const lastReached = new Map<string, number>();
  const reached: Array<{ accountId: string; to: string }> = [];
  for (const { after } of transitions) {
    if (after.channel !== 'whatsapp' || (after.status !== 'delivered' && after.status !== 'read')) continue;
    const key = `${after.account_id} ${after.to_address}`;
    const at = timeOf(after.read_at ?? after.delivered_at);
    lastReached.set(key, Math.max(lastReached.get(key) ?? 0, at));
    reached.push({ accountId: after.account_id, to: after.to_address });
  }
  await resetWhatsAppRecipientFailures(db, reached, options, transaction);
  const failures: WhatsAppRecipientFailure[] = [];
  for (const { after } of transitions) {
    if (after.channel !== 'whatsapp' || after.status !== 'failed' || !after.to_address) continue;
    const code = failureCodeOf(after.error);
    if (code !== OPTED_OUT_CODE && code !== UNDELIVERABLE_CODE) continue;
    const reset = lastReached.get(`${after.account_id} ${after.to_address}`);
    if (code === UNDELIVERABLE_CODE && reset !== undefined && reset >= timeOf(after.failed_at)) continue;
    failures.push({ accountId: after.account_id, to: after.to_address, contactId: after.contact_id, code, source: `message:${after.id}` });
  }
  await recordWhatsAppRecipientFailures(db, failures, { ...options, via: 'status' }, transaction);
}

function timeOf(value: unknown): number {
  const time = value instanceof Date ? value.getTime() : new Date(String(value)).getTime();
  return Number.isFinite(time) ? time : 0;
}
