import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError } from '../../errors/app-errors';
import type { NewEventOf } from '../../schemas/event';
import type { MessageStatus } from '../../schemas/message';
import type { SuppressionReason } from '../../schemas/suppression';
import { unsubscribeContact } from '../contacts/contact-operations';
import { recordEvents } from '../events/record-events';
import type { MessageMetrics } from '../messages/message-metrics';
import { applyStatusChanges, type StatusChange } from '../messages/message-store';
import { addSuppressions, normalizeSuppressionAddress, type NewSuppression } from '../suppressions/suppression-store';
import { DEFAULT_ACTIVITY_SETTINGS, type ActivitySettings } from '../activities/activity-settings';
import { recordSignals, type Signal } from '../signals/record-signals';
import type { FeedbackMetrics } from './feedback-metrics';

// What comes back about an email after it was sent, from whichever road (the listener's DSNs,
// ARF reports and unsubscribe mailbox; SES; SendGrid), recorded in one place
// (docs/channels.md "Deliverability"):
// - hard bounce: the message `bounced` and its address suppressed (`hard_bounce`);
// - complaint: the message `complained`, the address suppressed (`complaint`), and the contact
//   unsubscribed from email as the one-click link does (contact.updated and
//   contact.subscription_changed, source `unsubscribe`);
// - delivered: the message `delivered`;
// - dropped: the provider did not send it (SendGrid): `failed`, or `bounced` and suppressed when
//   the provider says the address bounced before;
// - rejected (a late 5.7.x: policy or content, RFC 3463): the message `failed`, no suppression;
// - soft bounce (delayed, transient): counted, nothing else;
// - unsubscribe (a mail to the unsubscribe mailbox): the contact unsubscribed.
// Statuses move forward only (the message store's conditional UPDATEs), so a repeated or late
// report changes nothing; message.bounced and message.complained come from the store's
// transitions. The account is always the message's: a report names a message, never an account.
// A test send's message makes no message.* event and unsubscribes no contact on a complaint
// (its address was typed, not the contact's).

export type FeedbackKind = 'hard_bounce' | 'rejected' | 'soft_bounce' | 'complaint' | 'delivered' | 'dropped' | 'unsubscribe';
export type FeedbackSource = 'dsn' | 'arf' | 'mailbox' | 'ses' | 'sendgrid';

export interface Feedback {
  kind: FeedbackKind;
  messageId: string;
  // When it happened, as the report says; the caller's now otherwise.
  at?: Date;
  // The report's words: `550 5.1.1 No such user`, `abuse`, `Bounced Address`.
  detail?: string | null;
  // dropped: the suppression the provider's reason calls for (null: none).
  suppress?: SuppressionReason | null;
}

export interface FeedbackResult {
  // Reports that named a message of ours (an email).
  matched: number;
  // Reports that named none: a message deleted since (with its contact), or not an email.
  unknown: number;
  // Messages whose status moved.
  changed: number;
  suppressed: number;
  unsubscribed: number;
}

interface TargetRow {
  id: string;
  account_id: string;
  contact_id: string;
  run_id: string | null;
  sequence_id: string | null;
  step_id: string | null;
  channel: string;
  to_address: string;
  test: number | boolean | string;
}

const isTrue = (value: unknown) => value === true || value === 1 || value === '1' || value === 'true';

const STATUS_OF: Partial<Record<FeedbackKind, MessageStatus>> = { hard_bounce: 'bounced', rejected: 'failed', complaint: 'complained', delivered: 'delivered' };
const SUPPRESSION_OF: Partial<Record<FeedbackKind, SuppressionReason>> = { hard_bounce: 'hard_bounce', complaint: 'complaint' };

export async function recordFeedback(
  db: Database,
  items: readonly Feedback[],
  options: { now: Date; source: FeedbackSource; metrics?: FeedbackMetrics; messageMetrics?: MessageMetrics; activities?: ActivitySettings },
): Promise<FeedbackResult> {
  const result: FeedbackResult = { matched: 0, unknown: 0, changed: 0, suppressed: 0, unsubscribed: 0 };
  if (items.length === 0) return result;
  const ids = [...new Set(items.map((item) => item.messageId))];
  const rows = await select<TargetRow>(db, "SELECT id, account_id, contact_id, run_id, sequence_id, step_id, channel, to_address, test FROM messages WHERE id IN (?) AND channel = 'email'", [ids]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const known = items.filter((item) => byId.has(item.messageId));
  result.matched = known.length;
  result.unknown = items.length - known.length;
  for (const item of items) options.metrics?.feedback.inc({ source: options.source, kind: item.kind, outcome: byId.has(item.messageId) ? 'matched' : 'unknown' });
  if (known.length === 0) return result;

  const changes = { real: [] as StatusChange[], test: [] as StatusChange[] };
  const suppressions = new Map<string, NewSuppression[]>();
  const unsubscribes = new Map<string, { accountId: string; id: string }>();
  for (const item of known) {
    const row = byId.get(item.messageId)!;
    const test = isTrue(row.test);
    const at = item.at ?? options.now;
    const dropped = item.kind === 'dropped';
    const status = dropped ? (item.suppress === 'hard_bounce' ? 'bounced' : 'failed') : STATUS_OF[item.kind];
    if (status) {
      const error = item.kind === 'hard_bounce' ? `bounced: ${item.detail ?? 'hard bounce'}` : item.kind === 'rejected' ? `rejected: ${item.detail ?? 'policy'}` : dropped ? `dropped: ${item.detail ?? 'by the provider'}` : null;
      (test ? changes.test : changes.real).push({ id: row.id, status, at, error: error?.slice(0, 1000) ?? null });
    }
    const reason = dropped ? item.suppress : SUPPRESSION_OF[item.kind];
    const address = reason ? normalizeSuppressionAddress('email', row.to_address) : null;
    if (reason && address) {
      const list = suppressions.get(row.account_id) ?? [];
      list.push({ channel: 'email', address, reason, source: `message:${row.id}`, contactId: test ? null : row.contact_id });
      suppressions.set(row.account_id, list);
    }
    if ((item.kind === 'complaint' && !test) || item.kind === 'unsubscribe') unsubscribes.set(`${row.account_id} ${row.contact_id}`, { accountId: row.account_id, id: row.contact_id });
  }

  await withTransaction(db, async (transaction) => {
    const events = new Map<string, NewEventOf[]>();
    const store = { now: options.now, metrics: options.messageMetrics };
    result.changed += (await applyStatusChanges(db, changes.real, { ...store, events }, transaction)).length;
    // A test send's transitions: their events are collected and dropped.
    result.changed += (await applyStatusChanges(db, changes.test, { ...store, events: new Map() }, transaction)).length;
    for (const accountId of [...suppressions.keys()].sort()) {
      result.suppressed += (await addSuppressions(db, accountId, suppressions.get(accountId)!, { now: options.now, events }, transaction)).added.length;
    }
    // Accounts in order: each one's event counter row is locked until COMMIT.
    for (const accountId of [...events.keys()].sort()) await recordEvents(db, accountId, events.get(accountId)!, transaction);
  });

  // The contacts' own write path, one contact at a time as the one-click link's (complaints are
  // few). After the messages' transaction: a failure here leaves the suppression in place, and
  // the report, answered with a temporary error, comes again and finishes it.
  for (const target of unsubscribes.values()) {
    try {
      const before = await select<{ email_subscription_status: string }>(db, 'SELECT email_subscription_status FROM contacts WHERE id = ? AND account_id = ?', [target.id, target.accountId]);
      await unsubscribeContact(db, { ...target, channel: 'email' });
      if (before[0] && before[0].email_subscription_status !== 'unsubscribed') result.unsubscribed += 1;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
  }

  // Last, in transactions of their own: the contacts' `email.bounced` activities
  // (bounceSignals). A failure here answers the report with a temporary error too, and its
  // repeat records what is missing (the ids make the rest no-ops).
  await recordSignals(db, bounceSignals(known, byId, options.now), options.activities ?? DEFAULT_ACTIVITY_SETTINGS);
  return result;
}

// `email.bounced` (docs/activities.md "Engagement signals"): a hard bounce (`type: "hard"`, id
// `email.bounced:<messageId>`; a provider's drop of an address that bounced before is one) and
// a complaint (`type: "complaint"`, id `email.bounced:<messageId>:complaint`). A soft bounce
// (delayed, a 4xx) records nothing: the message may still arrive, and a sequence that reacted
// to one would react to a full mailbox's afternoon. Nor does a rejection (5.7.x, the content or
// policy: the address is not at fault), nor a test send's report.
function bounceSignals(items: readonly Feedback[], byId: Map<string, TargetRow>, now: Date): Signal[] {
  const signals = new Map<string, Signal>();
  for (const item of items) {
    const row = byId.get(item.messageId)!;
    const type = item.kind === 'hard_bounce' || (item.kind === 'dropped' && item.suppress === 'hard_bounce') ? 'hard' : item.kind === 'complaint' ? 'complaint' : null;
    if (!type || isTrue(row.test)) continue;
    const id = type === 'hard' ? `email.bounced:${row.id}` : `email.bounced:${row.id}:complaint`;
    if (signals.has(id)) continue;
    signals.set(id, {
      accountId: row.account_id,
      contactId: row.contact_id,
      id,
      name: 'email.bounced',
      properties: { messageId: row.id, sequenceId: row.sequence_id, stepId: row.step_id, runId: row.run_id, type, detail: item.detail?.slice(0, 500) ?? null },
      occurredAt: item.at ?? now,
    });
  }
  return [...signals.values()];
}
