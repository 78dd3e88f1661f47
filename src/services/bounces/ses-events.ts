import type { Database } from '../../db/database';
import type { Feedback, FeedbackKind } from './record-feedback';
import { findEmailMessages, type MessageRef } from './find-messages';

// Amazon SES's notifications (docs/channels.md "Provider webhooks (SES, SendGrid)"), the
// `Message` of an SNS Notification: `notificationType` (identity notifications) or `eventType`
// (configuration-set event publishing) Bounce, Complaint or Delivery, with `mail` (SES's id,
// the source, the headers when included) and the event's own object.
// - Bounce Permanent: a hard bounce; Transient and Undetermined: soft (counted).
// - Complaint: a complaint, unless its complaintFeedbackType is `not-spam`.
// - Delivery: delivered.
// https://docs.aws.amazon.com/ses/latest/dg/notification-contents.html

export interface SesEvent {
  kind: FeedbackKind;
  ref: MessageRef;
  at: Date | null;
  detail: string | null;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const time = (value: unknown): Date | null => {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : null;
};

// Null: not a notification this service uses (another type, or not SES's shape).
export function sesEventOf(message: unknown): SesEvent | null {
  const body = obj(message);
  const type = str(body.notificationType) ?? str(body.eventType);
  const mail = obj(body.mail);
  const headers = Array.isArray(mail.headers) ? (mail.headers as unknown[]).map(obj) : [];
  const header = (name: string) => str(headers.find((h) => String(h.name).toLowerCase() === name)?.value);
  const ref: MessageRef = {
    providerId: str(mail.messageId),
    messageIdHeader: str(obj(mail.commonHeaders).messageId) ?? header('message-id'),
    returnPath: header('return-path') ?? str(mail.source),
  };
  if (type === 'Bounce') {
    const bounce = obj(body.bounce);
    const first = obj((Array.isArray(bounce.bouncedRecipients) ? bounce.bouncedRecipients : [])[0]);
    const detail = [str(bounce.bounceType), str(bounce.bounceSubType), str(first.status), str(first.diagnosticCode)].filter(Boolean).join(' ').slice(0, 500);
    return { kind: bounce.bounceType === 'Permanent' ? 'hard_bounce' : 'soft_bounce', ref, at: time(bounce.timestamp), detail };
  }
  if (type === 'Complaint') {
    const complaint = obj(body.complaint);
    if (complaint.complaintFeedbackType === 'not-spam') return null;
    return { kind: 'complaint', ref, at: time(complaint.timestamp), detail: str(complaint.complaintFeedbackType) ?? 'complaint' };
  }
  if (type === 'Delivery') return { kind: 'delivered', ref, at: time(obj(body.delivery).timestamp), detail: null };
  return null;
}

export async function sesFeedback(db: Database, settings: { key: Buffer | null; bounceDomain?: string }, events: readonly SesEvent[], now: Date): Promise<{ feedback: Feedback[]; unknown: number }> {
  const ids = await findEmailMessages(db, settings, events.map((event) => event.ref));
  const feedback: Feedback[] = [];
  events.forEach((event, index) => {
    const messageId = ids[index];
    if (messageId) feedback.push({ kind: event.kind, messageId, at: event.at ?? now, detail: event.detail });
  });
  return { feedback, unknown: events.length - feedback.length };
}
