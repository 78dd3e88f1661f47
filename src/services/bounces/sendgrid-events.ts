import type { Database } from '../../db/database';
import type { SuppressionReason } from '../../schemas/suppression';
import { findEmailMessages, type MessageRef } from './find-messages';
import type { Feedback, FeedbackKind } from './record-feedback';

// SendGrid's Event Webhook (docs/channels.md "Provider webhooks (SES, SendGrid)"): a JSON array
// of events, each with `event`, `timestamp` (Unix seconds), `smtp-id` (the Message-ID as we
// sent it) and `sg_message_id` (SendGrid's id, `<X-Message-Id>.<filter...>`).
// - delivered: delivered;
// - bounce: a hard bounce; `type: blocked` is soft (counted); a 5.7.x status is rejected;
// - dropped: not sent: failed, or bounced and suppressed when SendGrid's reason says the
//   address bounced, reported spam or is invalid;
// - spamreport: a complaint;
// - deferred: soft (counted). Other events (processed, open, click, ...) are passed over.
// https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event

export interface SendgridEvent {
  kind: FeedbackKind;
  ref: MessageRef;
  at: Date | null;
  detail: string | null;
  suppress: SuppressionReason | null;
}

const DROPPED_SUPPRESSION: Record<string, SuppressionReason> = {
  'bounced address': 'hard_bounce',
  'spam reporting address': 'complaint',
  invalid: 'invalid',
};
// A payload holds what SendGrid batched (up to some thousands of events); more is not its.
export const MAX_SENDGRID_EVENTS = 10_000;

type Json = Record<string, unknown>;
const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 && value.length <= 1000 ? value : null);

export function sendgridEventsOf(payload: unknown): SendgridEvent[] | null {
  if (!Array.isArray(payload) || payload.length > MAX_SENDGRID_EVENTS) return null;
  const events: SendgridEvent[] = [];
  for (const raw of payload) {
    if (!raw || typeof raw !== 'object') continue;
    const event = raw as Json;
    const sgId = str(event.sg_message_id);
    const ref: MessageRef = { messageIdHeader: str(event['smtp-id']), providerId: sgId ? sgId.split('.')[0]! : null };
    const seconds = Number(event.timestamp);
    const at = Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : null;
    const reason = str(event.reason);
    const status = str(event.status);
    const detail = [status, reason].filter(Boolean).join(' ').slice(0, 500) || null;
    const base = { ref, at, detail, suppress: null };
    switch (event.event) {
      case 'delivered':
        events.push({ ...base, kind: 'delivered' });
        break;
      case 'bounce':
        events.push({ ...base, kind: event.type === 'blocked' ? 'soft_bounce' : status?.startsWith('5.7.') ? 'rejected' : 'hard_bounce' });
        break;
      case 'dropped':
        events.push({ ...base, kind: 'dropped', suppress: DROPPED_SUPPRESSION[(reason ?? '').toLowerCase()] ?? null });
        break;
      case 'spamreport':
        events.push({ ...base, kind: 'complaint', detail: 'spamreport' });
        break;
      case 'deferred':
        events.push({ ...base, kind: 'soft_bounce' });
        break;
      default:
        break;
    }
  }
  return events;
}

export async function sendgridFeedback(db: Database, events: readonly SendgridEvent[], now: Date): Promise<{ feedback: Feedback[]; unknown: number }> {
  const ids = await findEmailMessages(db, { key: null }, events.map((event) => event.ref));
  const feedback: Feedback[] = [];
  events.forEach((event, index) => {
    const messageId = ids[index];
    if (messageId) feedback.push({ kind: event.kind, messageId, at: event.at ?? now, detail: event.detail, suppress: event.suppress });
  });
  return { feedback, unknown: events.length - feedback.length };
}
