import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { ChannelSettings } from '../channels/channel-settings';
import { openChannelSecret, verifyTokenHash } from '../channels/channel-secrets';
import { storedOptOutKeywords } from '../channels/whatsapp-channel';
import type { ActivitySettings } from '../activities/activity-settings';
import { recordWhatsAppReads, recordWhatsAppReplies } from '../signals/whatsapp-signals';
import type { MessageMetrics } from './message-metrics';
import { inboundMessagesOf, receiveWhatsAppMessages, type InboundMessage } from './whatsapp-inbound';
import type { WhatsAppInboundMetrics } from './whatsapp-inbound-metrics';
import { applyWhatsAppStatuses, arrayAt, objectAt, sameSecret, statusUpdatesOf, validMetaSignature } from './whatsapp-status-webhook';

// One post to /webhooks/whatsapp (docs/messages.md "The status webhook"): whose secret signed
// it, then its statuses and its inbound messages.
//
// Each account may have its own Meta app (its own app secret); the others share the server's
// WHATSAPP_APP_SECRET. A post names business numbers (value.metadata.phone_number_id), and the
// accounts are found from those (whatsapp_channels), never from anything else the body says.
// The signature is checked with the secret of each account a named number belongs to (its own,
// else the server's), and a number of no account with the server's: a post whose signature does
// not fit every number it names is a 401. It then counts for the accounts whose secret signed
// it, and for nobody else.
// - statuses: applied to messages of those accounts only (an account's own secret never
//   reaches another account's messages);
// - inbound messages: for the one account the number belongs to among them; a number no such
//   account has, or that two of them claim (two accounts that entered the same number ID and
//   share a secret), is dropped and counted: nobody can tell whose it is.

export interface WhatsAppPostOptions {
  // WHATSAPP_APP_SECRET.
  appSecret?: string;
  channels: ChannelSettings;
  now: Date;
  metrics?: MessageMetrics;
  inbound?: WhatsAppInboundMetrics;
  // The intake's settings: reads and replies are recorded as activities (whatsapp-signals.ts).
  activities: ActivitySettings;
}

export type WhatsAppPostOutcome =
  | { kind: 'not_configured' }
  | { kind: 'invalid_signature' }
  | { kind: 'malformed_json' }
  | { kind: 'ok'; body: { received: number; applied: number; unknown: number; messages?: { received: number; optedOut: number; recorded: number; unknown: number } } };

const SERVER = '';

interface NumberRow {
  account_id: string;
  phone_number_id: string;
  app_secret_secret: string | null;
  opt_out_keywords: unknown;
}

export async function receiveWhatsAppPost(db: Database, raw: Buffer, signature: string | undefined, options: WhatsAppPostOptions): Promise<WhatsAppPostOutcome> {
  let payload: unknown;
  let parsed = true;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    parsed = false;
  }
  const changes = parsed ? changesOf(payload) : [];
  const numberIds = [...new Set(changes.flatMap((change) => (change.phoneNumberId ? [change.phoneNumberId] : [])))];
  const rows =
    numberIds.length === 0
      ? []
      : await select<NumberRow>(
          db,
          'SELECT account_id, phone_number_id, app_secret_secret, opt_out_keywords FROM whatsapp_channels WHERE phone_number_id IN (?)',
          [numberIds],
        );
  const secrets = new Map<string, string>();
  if (options.appSecret) secrets.set(SERVER, options.appSecret);
  for (const row of rows) {
    const secret = openAppSecret(options.channels, row);
    if (secret) secrets.set(row.account_id, secret);
  }
  if (secrets.size === 0) return { kind: 'not_configured' };
  // One HMAC per distinct secret.
  const verdicts = new Map<string, boolean>();
  const signed = new Set<string>();
  for (const [holder, secret] of secrets) {
    if (!verdicts.has(secret)) verdicts.set(secret, validMetaSignature(raw, signature, secret));
    if (verdicts.get(secret)) signed.add(holder);
  }
  if (signed.size === 0) return { kind: 'invalid_signature' };
  if (!parsed) return { kind: 'malformed_json' };
  const trusted = (accountId: string, ownSecret: boolean) => (ownSecret ? signed.has(accountId) : signed.has(SERVER));
  // Every number the post names must be one whose secret signed it: an account's own secret
  // for its number, the server's for the others' and for numbers of no account.
  const vouched = (phoneNumberId: string | null) => {
    const owners = rows.filter((row) => row.phone_number_id === phoneNumberId);
    return owners.length === 0 ? signed.has(SERVER) : owners.some((row) => trusted(row.account_id, Boolean(row.app_secret_secret)));
  };
  if (!changes.every((change) => vouched(change.phoneNumberId))) return { kind: 'invalid_signature' };
  const { trusted: trustedStatuses, ...statuses } = await applyWhatsAppStatuses(db, statusUpdatesOf(payload, options.now), {
    now: options.now,
    metrics: options.metrics,
    inbound: options.inbound,
    trusted,
  });
  // After the statuses committed, in transactions of their own: a failure answers 500, and
  // Meta's retry records what is missing (each signal's id makes the rest no-ops).
  await recordWhatsAppReads(db, trustedStatuses, options.activities);

  const inbound = changes.flatMap((change) => (change.messages.length > 0 ? [change] : []));
  if (inbound.length === 0) return { kind: 'ok', body: statuses };
  const totals = { received: 0, optedOut: 0, recorded: 0, unknown: 0 };
  const perAccount = new Map<string, { row: NumberRow; messages: InboundMessage[] }>();
  for (const change of inbound) {
    const messages = inboundMessagesOf(change.messages, options.now);
    const owners = rows.filter((row) => row.phone_number_id === change.phoneNumberId && trusted(row.account_id, Boolean(row.app_secret_secret)));
    if (owners.length !== 1) {
      totals.received += messages.length;
      totals.unknown += messages.length;
      if (messages.length > 0) options.inbound?.inbound.inc({ outcome: 'unknown_account' }, messages.length);
      continue;
    }
    const owner = owners[0]!;
    const entry = perAccount.get(owner.account_id) ?? { row: owner, messages: [] };
    entry.messages.push(...messages);
    perAccount.set(owner.account_id, entry);
  }
  for (const [accountId, { row, messages }] of perAccount) {
    const result = await receiveWhatsAppMessages(db, accountId, messages, { now: options.now, keywords: storedOptOutKeywords(row), metrics: options.inbound });
    await recordWhatsAppReplies(db, accountId, result.replies, options.activities);
    totals.received += result.received;
    totals.optedOut += result.optedOut;
    totals.recorded += result.recorded;
    totals.unknown += result.unknown;
  }
  return { kind: 'ok', body: { ...statuses, messages: totals } };
}

// An account's secret that cannot be read (no secrets key now, or another one) checks nothing.
function openAppSecret(channels: ChannelSettings, row: NumberRow): string | null {
  if (!row.app_secret_secret) return null;
  try {
    return openChannelSecret(channels, row.account_id, 'whatsapp_channels.app_secret_secret', row.app_secret_secret);
  } catch {
    return null;
  }
}

// entry[].changes[].value: the number it names, and its inbound messages.
function changesOf(payload: unknown): Array<{ phoneNumberId: string | null; messages: unknown[] }> {
  const changes: Array<{ phoneNumberId: string | null; messages: unknown[] }> = [];
  for (const entry of arrayAt(payload, 'entry')) {
    for (const change of arrayAt(entry, 'changes')) {
      const value = objectAt(change, 'value');
      const id = objectAt(objectAt(value, 'metadata'), 'phone_number_id');
      changes.push({ phoneNumberId: typeof id === 'string' && /^\d{1,32}$/.test(id) ? id : null, messages: arrayAt(value, 'messages') });
    }
  }
  return changes;
}

// Meta's GET handshake names no number: its token is compared with WHATSAPP_VERIFY_TOKEN, and
// looked up among the accounts' (by its keyed hash, one indexed read). null: no token is
// configured anywhere (the route answers 404).
export async function verifyTokenMatches(
  db: Database,
  token: string,
  options: { verifyToken?: string; channels: ChannelSettings },
): Promise<boolean | null> {
  if (options.verifyToken && sameSecret(token, options.verifyToken)) return true;
  if (!options.channels.secrets) return options.verifyToken ? false : null;
  const [match] = await select<{ account_id: string }>(
    db,
    'SELECT account_id FROM whatsapp_channels WHERE verify_token_hash = ? LIMIT 1',
    [verifyTokenHash(options.channels, token)],
  );
  if (match) return true;
  if (options.verifyToken) return false;
  const [any] = await select<{ account_id: string }>(db, 'SELECT account_id FROM whatsapp_channels WHERE verify_token_hash IS NOT NULL LIMIT 1', []);
  return any ? false : null;
}
