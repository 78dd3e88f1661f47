import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import type { NewEventOf } from '../../schemas/event';
import { isOptOut, optOutKeys } from '../../schemas/opt-out-keywords';
import { contactsByPhoneDigits } from '../contacts/whatsapp-contacts';
import { recordEvents } from '../events/record-events';
import type { WhatsAppInboundMetrics, WhatsAppInboundOutcome } from './whatsapp-inbound-metrics';
import { optOutWhatsAppNumbers } from './whatsapp-recipient-failures';
import { metaTime } from './whatsapp-status-webhook';

// The messages contacts send to an account's business number (docs/messages.md "Inbound
// messages"), as Meta posts them: entry[].changes[].value.messages[], the value's
// metadata.phone_number_id naming the number (and so the account: whatsapp-webhook-post.ts
// finds it, never this payload's other claims).
// - An opt-out (the account's keywords, docs/channels.md "WhatsApp opt-outs and sender health"):
//   the number suppressed (`opt_out`) and its contacts unsubscribed from WhatsApp.
// - Anything else: message.received, for each contact of the account with that number.
// - From a number no contact has: counted, and dropped (an opt-out still suppresses it).
// A post Meta sends again records its message.received events again, with the same
// providerMessageId: consumers that must see each once keep the ids they have seen.

export interface InboundMessage {
  // E.164 digits, as WhatsApp's wa_id.
  from: string;
  id: string;
  type: string;
  text: string | null;
  payload: string | null;
  at: Date;
  // The wamid of the message this one answers (context.id), when the contact replied to one.
  context: string | null;
}

const MAX_TEXT = 4096;
const WA_ID = /^[1-9]\d{5,14}$/;

// The inbound messages of one change's value; those without a sender or an id are passed over.
export function inboundMessagesOf(messages: readonly unknown[], now: Date): InboundMessage[] {
  const read: InboundMessage[] = [];
  for (const raw of messages) {
    if (!raw || typeof raw !== 'object') continue;
    const message = raw as Record<string, unknown>;
    if (typeof message.from !== 'string' || !WA_ID.test(message.from)) continue;
    if (typeof message.id !== 'string' || message.id.length === 0 || message.id.length > 191) continue;
    const type = typeof message.type === 'string' ? message.type.slice(0, 32) : 'unknown';
    const { text, payload } = contentOf(type, message);
    const context = (message.context as { id?: unknown } | undefined)?.id;
    read.push({
      from: message.from,
      id: message.id,
      type,
      text: clip(text),
      payload: clip(payload),
      at: metaTime(message.timestamp, now),
      context: typeof context === 'string' && context.length > 0 && context.length <= 191 ? context : null,
    });
  }
  return read;
}

// text: a text's body, a quick-reply button's text, an interactive reply's title, a media's
// caption; payload: the button's payload, the interactive reply's id.
function contentOf(type: string, message: Record<string, unknown>): { text: unknown; payload: unknown } {
  const part = (message[type] ?? {}) as Record<string, unknown>;
  if (type === 'text') return { text: part.body, payload: null };
  if (type === 'button') return { text: part.text, payload: part.payload };
  if (type === 'interactive') {
    const reply = (part.button_reply ?? part.list_reply ?? {}) as Record<string, unknown>;
    return { text: reply.title, payload: reply.id };
  }
  return { text: part.caption, payload: null };
}

const clip = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_TEXT) : null);

export interface InboundResult {
  received: number;
  optedOut: number;
  recorded: number;
  unknown: number;
  // What was recorded, committed: each message that is not an opt-out with its contacts (their
  // `whatsapp.replied`, src/services/signals/whatsapp-signals.ts).
  replies: Array<{ message: InboundMessage; contactIds: string[] }>;
}

// One account's inbound messages, in one transaction: one lookup of the numbers' contacts, the
// opt-outs' writes, the events.
export async function receiveWhatsAppMessages(
  db: Database,
  accountId: string,
  messages: readonly InboundMessage[],
  options: { now: Date; keywords: readonly string[] | null; metrics?: WhatsAppInboundMetrics },
): Promise<InboundResult> {
  const result: InboundResult = { received: messages.length, optedOut: 0, recorded: 0, unknown: 0, replies: [] };
  if (messages.length === 0) return result;
  const keys = optOutKeys(options.keywords);
  const counts = new Map<WhatsAppInboundOutcome, number>();
  const count = (outcome: WhatsAppInboundOutcome) => counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  let replies: InboundResult['replies'] = [];
  await withTransaction(db, async (transaction) => {
    counts.clear();
    replies = [];
    const stops = messages.filter((message) => isOptOut(keys, [message.text, message.payload]));
    const others = messages.filter((message) => !stops.includes(message));
    const events = new Map<string, NewEventOf[]>();
    await optOutWhatsAppNumbers(
      db,
      accountId,
      stops.map((message) => ({ to: message.from, contactId: null, source: `provider:whatsapp:${message.id}`.slice(0, 255) })),
      { now: options.now, events },
      transaction,
    );
    if (stops.length > 0) counts.set('opt_out', stops.length);
    const contacts = await contactsByPhoneDigits(db, accountId, others.map((message) => message.from), transaction);
    const received: NewEventOf[] = [];
    for (const message of others) {
      const ids = contacts.get(message.from) ?? [];
      if (ids.length === 0) {
        count('unknown_number');
        continue;
      }
      count('received');
      replies.push({ message, contactIds: [...ids] });
      for (const contactId of ids) {
        received.push({
          type: 'message.received',
          data: {
            contactId,
            channel: 'whatsapp',
            from: `+${message.from}`,
            providerMessageId: message.id,
            type: message.type,
            text: message.text,
            payload: message.payload,
            receivedAt: message.at.toISOString(),
          },
        });
      }
    }
    await recordEvents(db, accountId, [...(events.get(accountId) ?? []), ...received], transaction);
    if (options.metrics) {
      const metrics = options.metrics;
      const committed = new Map(counts);
      const optOuts = stops.length;
      transaction.afterCommit(() => {
        for (const [outcome, value] of committed) metrics.inbound.inc({ outcome }, value);
        if (optOuts > 0) metrics.optOuts.inc({ source: 'keyword' }, optOuts);
      });
    }
  });
  result.optedOut = counts.get('opt_out') ?? 0;
  result.recorded = counts.get('received') ?? 0;
  result.unknown = counts.get('unknown_number') ?? 0;
  result.replies = replies;
  return result;
}
