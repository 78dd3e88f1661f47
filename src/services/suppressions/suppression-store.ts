import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, insertIgnoringConflicts, select } from '../../db/sql/statements';
import { toIso } from '../../db/sql/rows';
import type { NewEventOf } from '../../schemas/event';
import { normalizeEmail } from '../../schemas/contact';
import type { MessageChannel } from '../../schemas/message';
import type { SuppressionDto, SuppressionReason } from '../../schemas/suppression';
import { recordEvents } from '../events/record-events';
import { newRowId } from '../ids';
import { whatsappRecipient } from '../messages/whatsapp-recipient';
import { countAdded } from './suppression-tally';

// The suppression list's data layer (docs/channels.md "Deliverability"). Every writer goes
// through here: the API, the dashboard, the engine (hard bounces, invalid numbers), the
// bounce listener and provider webhooks (late bounces, complaints) and WhatsApp opt-outs. A
// suppression is keyed by (account, channel, address): adding one that exists changes nothing
// (the first reason and source stay), whoever adds it at the same time.

export interface NewSuppression {
  channel: MessageChannel;
  // Normalized already (normalizeSuppressionAddress).
  address: string;
  reason: SuppressionReason;
  source: string | null;
  // The contact the writer knows has this address (the engine's, a webhook's): its
  // contact.suppressed event. Contacts with the email are found here too.
  contactId?: string | null;
}

export interface SuppressionRow {
  id: string;
  account_id: string;
  channel: MessageChannel;
  address: string;
  reason: SuppressionReason;
  source: string | null;
  created_at: Date | string;
}

export const SUPPRESSION_COLUMNS = 'id, account_id, channel, address, reason, source, created_at';

export function toSuppressionDto(row: SuppressionRow): SuppressionDto {
  return { channel: row.channel, address: row.address, reason: row.reason, source: row.source, createdAt: toIso(row.created_at) };
}

// The stored form of an address: an email as contacts' are keyed; a phone in E.164 with its +
// (`+49 151 1285 5001` and `004915112855001` are `+4915112855001`). Null: not an address of that
// channel.
export function normalizeSuppressionAddress(channel: MessageChannel, raw: string): string | null {
  if (channel === 'email') {
    const email = normalizeEmail(raw);
    return email.length > 0 && email.length <= 254 && email.includes('@') ? email : null;
  }
  const recipient = whatsappRecipient(raw);
  return recipient.ok ? `+${recipient.to}` : null;
}

// Adds the suppressions (one INSERT that leaves existing ones alone, one read back), records a
// contact.suppressed event for each contact that has a newly suppressed address, and answers
// which were added now. In the caller's transaction; events are recorded last, as
// recordEvents asks, unless the caller collects them (`events`) to record with its own.
export async function addSuppressions(
  db: Database,
  accountId: string,
  items: readonly NewSuppression[],
  options: { now: Date; events?: Map<string, NewEventOf[]> },
  transaction: Transaction,
): Promise<{ added: SuppressionRow[]; existing: number }> {
  const unique = new Map<string, NewSuppression>();
  for (const item of items) if (!unique.has(keyOf(item.channel, item.address))) unique.set(keyOf(item.channel, item.address), item);
  if (unique.size === 0) return { added: [], existing: 0 };
  const list = [...unique.values()].sort((a, b) => compare(keyOf(a.channel, a.address), keyOf(b.channel, b.address)));
  const ids = new Map(list.map((item) => [keyOf(item.channel, item.address), newRowId()]));
  await insertIgnoringConflicts(
    db,
    'suppressions',
    ['id', 'account_id', 'channel', 'address', 'reason', 'source', 'created_at'],
    list.map((item) => [ids.get(keyOf(item.channel, item.address)), accountId, item.channel, item.address, item.reason, item.source?.slice(0, 255) ?? null, options.now]),
    transaction,
  );
  const stored = await readSuppressions(db, accountId, list, transaction);
  const added = stored.filter((row) => ids.get(keyOf(row.channel, row.address)) === row.id);
  const events = await suppressionEvents(db, accountId, 'contact.suppressed', added, list, transaction);
  await record(db, accountId, events, options.events, transaction);
  // Counted once committed: a rolled-back (or retried) transaction added nothing.
  if (added.length > 0) transaction.afterCommit(() => countAdded(db, added));
  return { added, existing: list.length - added.length };
}

// Removes one suppression; answers it, or null when there was none. Records contact.unsuppressed
// for each contact that has the address.
export async function removeSuppression(
  db: Database,
  accountId: string,
  key: { channel: MessageChannel; address: string },
  transaction: Transaction,
): Promise<SuppressionRow | null> {
  const [row] = await select<SuppressionRow>(
    db,
    `SELECT ${SUPPRESSION_COLUMNS} FROM suppressions WHERE account_id = ? AND channel = ? AND address = ?${forUpdate(db)}`,
    [accountId, key.channel, key.address],
    transaction,
  );
  if (!row) return null;
  await execute(db, 'DELETE FROM suppressions WHERE id = ?', [row.id], transaction);
  const events = await suppressionEvents(db, accountId, 'contact.unsuppressed', [row], [], transaction);
  await record(db, accountId, events, undefined, transaction);
  return row;
}

export async function findSuppression(db: Database, accountId: string, key: { channel: MessageChannel; address: string }): Promise<SuppressionRow | null> {
  const [row] = await select<SuppressionRow>(
    db,
    `SELECT ${SUPPRESSION_COLUMNS} FROM suppressions WHERE account_id = ? AND channel = ? AND address = ?`,
    [accountId, key.channel, key.address],
  );
  return row ?? null;
}

// Which of these (account, address) pairs are suppressed on the channel: one statement per
// channel whatever the batch's size (the engine's batch read of its messages' recipients).
// Answers the keys `accountId address` of those suppressed.
export async function suppressedAddresses(
  db: Database,
  channel: MessageChannel,
  pairs: ReadonlyArray<{ accountId: string; address: string }>,
  transaction?: Transaction,
): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await select<{ account_id: string; address: string }>(
    db,
    'SELECT account_id, address FROM suppressions WHERE account_id IN (?) AND channel = ? AND address IN (?)',
    [[...new Set(pairs.map((pair) => pair.accountId))], channel, [...new Set(pairs.map((pair) => pair.address))]],
    transaction,
  );
  return new Set(rows.map((row) => suppressedKey(row.account_id, row.address)));
}

export function suppressedKey(accountId: string, address: string): string {
  return `${accountId} ${address}`;
}

async function readSuppressions(db: Database, accountId: string, list: readonly NewSuppression[], transaction: Transaction): Promise<SuppressionRow[]> {
  const rows: SuppressionRow[] = [];
  for (const channel of new Set(list.map((item) => item.channel))) {
    const addresses = list.filter((item) => item.channel === channel).map((item) => item.address);
    rows.push(
      ...(await select<SuppressionRow>(
        db,
        `SELECT ${SUPPRESSION_COLUMNS} FROM suppressions WHERE account_id = ? AND channel = ? AND address IN (?)`,
        [accountId, channel, addresses],
        transaction,
      )),
    );
  }
  return rows;
}

// One event per contact that has a changed address: by email (the contacts' unique key), and
// the contacts the writers named (a phone is free text on a contact, so a number is matched to
// the contact its message or webhook came from).
async function suppressionEvents(
  db: Database,
  accountId: string,
  type: 'contact.suppressed' | 'contact.unsuppressed',
  rows: readonly SuppressionRow[],
  items: readonly NewSuppression[],
  transaction: Transaction,
): Promise<NewEventOf[]> {
  if (rows.length === 0) return [];
  const emails = rows.filter((row) => row.channel === 'email').map((row) => row.address);
  const named = new Map(items.filter((item) => item.contactId).map((item) => [keyOf(item.channel, item.address), item.contactId!]));
  const contacts = await select<{ id: string; email: string; email_normalized: string }>(
    db,
    `SELECT id, email, email_normalized FROM contacts WHERE account_id = ? AND (email_normalized IN (?) OR id IN (?))`,
    [accountId, emails.length > 0 ? emails : [''], named.size > 0 ? [...named.values()] : ['']],
    transaction,
  );
  const events: NewEventOf[] = [];
  for (const row of rows) {
    const suppression = toSuppressionDto(row);
    const namedId = named.get(keyOf(row.channel, row.address));
    for (const contact of contacts) {
      const has = (row.channel === 'email' && String(contact.email_normalized) === row.address) || contact.id === namedId;
      if (has) events.push({ type, data: { contact: { id: contact.id, email: contact.email }, suppression } } as NewEventOf);
    }
  }
  return events;
}

async function record(db: Database, accountId: string, events: NewEventOf[], collector: Map<string, NewEventOf[]> | undefined, transaction: Transaction) {
  if (events.length === 0) return;
  if (collector) collector.set(accountId, [...(collector.get(accountId) ?? []), ...events]);
  else await recordEvents(db, accountId, events, transaction);
}

const keyOf = (channel: string, address: string) => `${channel} ${address}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
