import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, insertIgnoringConflicts, select } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import { MESSAGE_STATUS_RANK, type MessageChannel, type MessageStatus, type SkipReason } from '../../schemas/message';
import type { MessageCategory } from '../../schemas/sequence-definition';
import { recordEvents } from '../events/record-events';
import { newRowId } from '../ids';
import { messageEvents, type MessageTransition } from './message-events';
import type { MessageMetrics } from './message-metrics';
import { MESSAGE_COLUMNS, type MessageRow } from './message-rows';
import { HANDED_OVER_SQL, movableTo } from './message-status-sql';
import { countMessageStatuses } from '../analytics/message-progress';

// The messages table's writes (db/migrations/20261218000000-create-messages.js), for the sender
// and the status webhook. Each takes the caller's transaction and a batch, and costs a few
// statements whatever the batch's size. Statuses only move forward (src/schemas/message.ts):
// every change is a conditional UPDATE, so a late or repeated report changes nothing, whoever
// writes at the same time. A change that makes an event (message.sent, .delivered, .read,
// .failed) records it in the same transaction.

export interface StoreOptions {
  // The time written as the change's (sent_at, updated_at, ...), unless a change gives its own.
  now: Date;
  metrics?: MessageMetrics;
  // Given: the events are added here, for the caller to record with its own, last, before its
  // COMMIT (recordEvents holds the account's counter row until then). Absent: recorded here.
  events?: Map<string, NewEventOf[]>;
}

export interface MessageToQueue {
  accountId: string;
  contactId: string;
  channel: MessageChannel;
  // The id derived from run, step and visit: Message-ID, biz_opaque_callback_data.
  messageKey: string;
  to: string;
  subject?: string | null;
  runId?: string | null;
  runVisit?: number | null;
  sequenceId?: string | null;
  stepId?: string | null;
  stepVisit?: number | null;
  outboxId?: string | null;
  test?: boolean;
  // Counted toward the channel's frequency cap when marketing (the default; docs/channels.md).
  category?: MessageCategory;
}

// Writes queued messages; one that exists (same message key, same run visit or same outbox
// row: a step begun again) is left as it is. Answers the id of each message by its key,
// whether written now or before.
export async function queueMessages(
  db: Database,
  messages: readonly MessageToQueue[],
  options: { now: Date },
  transaction: Transaction,
): Promise<Map<string, string>> {
  if (messages.length === 0) return new Map();
  const now = options.now;
  await insertIgnoringConflicts(
    db,
    'messages',
    ['id', 'account_id', 'contact_id', 'run_id', 'run_visit', 'sequence_id', 'step_id', 'step_visit', 'outbox_id', 'test', 'channel',
      'message_key', 'to_address', 'subject', 'status', 'category', 'created_at', 'updated_at'],
    messages.map((m) => [
      newRowId(), m.accountId, m.contactId, m.runId ?? null, m.runVisit ?? null, m.sequenceId ?? null, m.stepId ?? null,
      m.stepVisit ?? null, m.outboxId ?? null, m.test ?? false, m.channel, m.messageKey, m.to, m.subject ?? null, 'queued', m.category ?? 'marketing', now, now,
    ]),
    transaction,
  );
  const rows = await select<{ id: string; message_key: string }>(
    db,
    'SELECT id, message_key FROM messages WHERE message_key IN (?)',
    [messages.map((m) => m.messageKey)],
    transaction,
  );
  return new Map(rows.map((row) => [row.message_key, row.id]));
}

// The messages of these keys (the outbox's idempotency ids), as they are now: what a sender
// holding an outbox row needs to know of its message (its id, and whether it is still to send).
export async function messagesByKey(
  db: Database,
  keys: readonly string[],
  transaction?: Transaction,
): Promise<Map<string, { id: string; status: MessageStatus; channel: MessageChannel; providerMessageId: string | null }>> {
  if (keys.length === 0) return new Map();
  const rows = await select<{ id: string; message_key: string; status: MessageStatus; channel: MessageChannel; provider_message_id: string | null }>(
    db,
    'SELECT id, message_key, status, channel, provider_message_id FROM messages WHERE message_key IN (?)',
    [[...new Set(keys)]],
    transaction,
  );
  return new Map(rows.map((row) => [row.message_key, { id: row.id, status: row.status, channel: row.channel, providerMessageId: row.provider_message_id }]));
}

// What is being sent, written before the provider is called: a message queued (or sending
// again, after a crash or a retry) becomes `sending` with its content (JSON). Answers how many
// rows changed; a message already past sending is left alone.
// The address and subject, as rendered for this attempt, replace those written when it was
// queued (the contact may have changed its email meanwhile).
export async function markSending(
  db: Database,
  messages: ReadonlyArray<{ id: string; content: unknown; to?: string; subject?: string | null }>,
  options: { now: Date },
  transaction: Transaction,
): Promise<number> {
  if (messages.length === 0) return 0;
  const content = caseById(messages.map((m) => [m.id, JSON.stringify(m.content)]));
  const to = caseById(messages.map((m) => [m.id, m.to ?? null]));
  const subject = caseById(messages.map((m) => [m.id, m.subject === undefined ? null : m.subject]));
  return execute(
    db,
    `UPDATE messages SET content = ${content.sql}, to_address = COALESCE(${to.sql}, to_address), subject = COALESCE(${subject.sql}, subject),
       updated_at = ?, status = 'sending' WHERE id IN (?) AND status IN ('queued', 'sending')`,
    [...content.values, ...to.values, ...subject.values, options.now, messages.map((m) => m.id)],
    transaction,
  );
}

// An attempt that failed and will be retried: back to `queued`, with the attempt's error.
export async function markRetrying(
  db: Database,
  messages: ReadonlyArray<{ id: string; error: string }>,
  options: { now: Date },
  transaction: Transaction,
): Promise<number> {
  if (messages.length === 0) return 0;
  const error = caseById(messages.map((m) => [m.id, m.error.slice(0, 1000)]));
  return execute(
    db,
    `UPDATE messages SET error = ${error.sql}, updated_at = ?, status = 'queued' WHERE id IN (?) AND status = 'sending'`,
    [...error.values, options.now, messages.map((m) => m.id)],
    transaction,
  );
}

// The provider took them: `sent`, with its id of each (null when it gave none).
export function markSent(
  db: Database,
  messages: ReadonlyArray<{ id: string; providerMessageId: string | null; at?: Date }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  return applyStatusChanges(db, messages.map((m) => ({ ...m, status: 'sent' as const })), options, transaction);
}

// No provider is configured: written to the data folder's outbox/ instead.
export function markCaptured(
  db: Database,
  messages: ReadonlyArray<{ id: string; at?: Date }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  return applyStatusChanges(db, messages.map((m) => ({ ...m, status: 'captured' as const })), options, transaction);
}

// Failed for good, with the code and text (`bounced: 550 ...`, `131026: ...`).
export function markFailed(
  db: Database,
  messages: ReadonlyArray<{ id: string; error: string; at?: Date }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  return applyStatusChanges(db, messages.map((m) => ({ ...m, status: 'failed' as const })), options, transaction);
}

// Nothing was sent, and why: only a message not yet handed to a provider.
export function markSkipped(
  db: Database,
  messages: ReadonlyArray<{ id: string; reason: SkipReason }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  return applyStatusChanges(db, messages.map((m) => ({ id: m.id, error: m.reason, status: 'skipped' as const })), options, transaction);
}

// Its run ended or left the step before it was sent (reason: what the timeline says).
export function markCancelled(
  db: Database,
  messages: ReadonlyArray<{ id: string; reason?: string }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  return applyStatusChanges(db, messages.map((m) => ({ id: m.id, error: m.reason ?? null, status: 'cancelled' as const })), options, transaction);
}

// The queued messages of sends just cancelled (their run ended, or moved on, before they went):
// `cancelled`, with why. One statement, in the transaction that cancelled the sends, after them
// (the lock order: runs, outbox rows, messages). A message `sending` is left as it is: the
// provider may have it.
export async function cancelMessagesOfCancelledSends(
  db: Database,
  runIds: readonly string[],
  reason: string,
  now: Date,
  transaction: Transaction,
): Promise<number> {
  if (runIds.length === 0) return 0;
  return execute(
    db,
    `UPDATE messages SET status = 'cancelled', error = ?, updated_at = ?
     WHERE run_id IN (?) AND status = 'queued' AND outbox_id IN (SELECT o.id FROM outbox o WHERE o.run_id IN (?) AND o.status = 'cancelled')`,
    [reason.slice(0, 1000), now, runIds, runIds],
    transaction,
  );
}

export interface StatusChange {
  id: string;
  status: MessageStatus;
  // When it happened (the provider's time, for its reports); options.now unless given.
  at?: Date;
  // Kept if the message has none yet.
  providerMessageId?: string | null;
  // The failure or the skip's reason; cleared by any other status that applies.
  error?: string | null;
}

// The time column each status sets (skipped and cancelled set none).
const TIME_COLUMN: Partial<Record<MessageStatus, string>> = {
  sent: 'sent_at',
  captured: 'sent_at',
  delivered: 'delivered_at',
  failed: 'failed_at',
  bounced: 'failed_at',
  read: 'read_at',
};

// Sent, delivered and read are facts whatever the order they are learnt in: a late `delivered`
// leaves a read message `read`, but its time is kept if none was.
const TIME_KEPT_WHEN_PASSED: ReadonlySet<MessageStatus> = new Set(['sent', 'delivered', 'read']);

// Applies each change to its message where the order allows it (a few statements: a locking
// read, one UPDATE per status present, a read back), records the events of what moved, and
// answers each message that changed status, before and after.
export async function applyStatusChanges(
  db: Database,
  changes: readonly StatusChange[],
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  if (changes.length === 0) return [];
  const ids = [...new Set(changes.map((change) => change.id))].sort();
  // Locked in id order, so that two writers of the same messages queue instead of deadlocking,
  // and what moved is told from the rows as they were just before.
  const before = await select<MessageRow>(
    db,
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id IN (?) ORDER BY id${forUpdate(db)}`,
    [ids],
    transaction,
  );
  if (before.length === 0) return [];
  const byStatus = new Map<MessageStatus, StatusChange[]>();
  for (const change of changes) byStatus.set(change.status, [...(byStatus.get(change.status) ?? []), change]);
  // Lowest first: changes of one call then add up to the highest one each message may reach.
  const targets = [...byStatus.keys()].sort((a, b) => MESSAGE_STATUS_RANK[a] - MESSAGE_STATUS_RANK[b]);
  for (const target of targets) await applyOneStatus(db, target, byStatus.get(target)!, options.now, transaction);
  const after = await select<MessageRow>(db, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id IN (?)`, [ids], transaction);
  // The analytics counters: each time first written (analytics/message-progress.ts).
  countMessageStatuses(db, transaction, before, after, options.now);

  const beforeById = new Map(before.map((row) => [row.id, row]));
  const transitions: MessageTransition[] = [];
  for (const row of after) {
    const was = beforeById.get(row.id);
    if (!was || was.status === row.status) continue;
    const asked = changes.filter((change) => change.id === row.id).map((change) => change.status);
    transitions.push({ before: was, after: row, reached: reachedStatuses(was.status, row.status, asked) });
  }
  await recordTransitions(db, transitions, options, transaction);
  return transitions;
}

// The statuses a message went through in one call, lowest first: those asked for that rank
// above where it was and up to where it is (a failure only when it ended failed).
function reachedStatuses(from: MessageStatus, to: MessageStatus, asked: readonly MessageStatus[]): MessageStatus[] {
  const reached = [...new Set(asked)].filter(
    (status) =>
      status === to ||
      (status !== 'failed' &&
        status !== 'bounced' &&
        MESSAGE_STATUS_RANK[status] > MESSAGE_STATUS_RANK[from] &&
        MESSAGE_STATUS_RANK[status] < MESSAGE_STATUS_RANK[to] &&
        to !== 'skipped' &&
        to !== 'cancelled'),
  );
  return reached.sort((a, b) => MESSAGE_STATUS_RANK[a] - MESSAGE_STATUS_RANK[b]);
}

// One UPDATE for every message moving to one status. `status` is assigned last: MySQL reads the
// columns a statement has already assigned as their new values (SQLite never does), and every
// other assignment must see the status as it was.
async function applyOneStatus(db: Database, target: MessageStatus, changes: readonly StatusChange[], now: Date, transaction: Transaction): Promise<void> {
  const movable = movableTo(target);
  const sets: string[] = [];
  const values: unknown[] = [];
  const timeColumn = TIME_COLUMN[target];
  if (timeColumn) {
    const at = caseById(changes.map((change) => [change.id, change.at ?? now]));
    const when = TIME_KEPT_WHEN_PASSED.has(target) ? `(${movable} OR ${HANDED_OVER_SQL})` : movable;
    sets.push(`${timeColumn} = CASE WHEN ${timeColumn} IS NULL AND ${when} THEN ${at.sql} ELSE ${timeColumn} END`);
    values.push(...at.values);
  }
  const providerIds = changes.filter((change) => change.providerMessageId);
  if (providerIds.length > 0) {
    const provider = caseById(providerIds.map((change) => [change.id, change.providerMessageId!]));
    sets.push(`provider_message_id = COALESCE(provider_message_id, ${provider.sql})`);
    values.push(...provider.values);
  }
  const error = caseById(changes.map((change) => [change.id, change.error ? change.error.slice(0, 1000) : null]));
  sets.push(`error = CASE WHEN ${movable} THEN ${error.sql} ELSE error END`);
  values.push(...error.values);
  sets.push('updated_at = ?');
  values.push(now);
  sets.push(`status = CASE WHEN ${movable} THEN ? ELSE status END`);
  values.push(target);
  await execute(db, `UPDATE messages SET ${sets.join(', ')} WHERE id IN (?)`, [...values, [...new Set(changes.map((change) => change.id))]], transaction);
}

// The events of the transitions, recorded (or handed to the caller's collector), and the
// metrics counted once the transaction has committed.
async function recordTransitions(db: Database, transitions: readonly MessageTransition[], options: StoreOptions, transaction: Transaction): Promise<void> {
  if (transitions.length === 0) return;
  const events = messageEvents(transitions);
  if (options.events) {
    for (const [accountId, list] of events) options.events.set(accountId, [...(options.events.get(accountId) ?? []), ...list]);
  } else {
    // Accounts in order: each event counter row is locked until COMMIT.
    for (const accountId of [...events.keys()].sort()) await recordEvents(db, accountId, events.get(accountId)!, transaction);
  }
  const metrics = options.metrics;
  if (metrics) {
    transaction.afterCommit(() => {
      for (const { after, reached } of transitions) for (const outcome of reached) metrics.total.inc({ channel: after.channel, outcome });
    });
  }
}

// `CASE id WHEN ? THEN ? ... END` with its values: one value per row in one statement.
function caseById(pairs: ReadonlyArray<readonly [string, unknown]>): { sql: string; values: unknown[] } {
  return { sql: `CASE id ${pairs.map(() => 'WHEN ? THEN ?').join(' ')} END`, values: pairs.flat() };
}
