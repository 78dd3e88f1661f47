import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, select } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import { contactsByPhoneDigits, unsubscribeFromWhatsApp } from '../contacts/whatsapp-contacts';
import { recordEvents } from '../events/record-events';
import { addSuppressions, type NewSuppression } from '../suppressions/suppression-store';
import type { WhatsAppInboundMetrics, WhatsAppOptOutSource } from './whatsapp-inbound-metrics';

// What WhatsApp says about a recipient rather than about one message (docs/channels.md "WhatsApp
// opt-outs and sender health"), from the status webhook or from Graph's answer to a send:
// - 131050 (the user stopped marketing messages): an opt-out, as a STOP is: the number is
//   suppressed (`opt_out`) and its contacts unsubscribed from WhatsApp;
// - 131026 (message undeliverable): counted per account and number; UNDELIVERABLE_IN_A_ROW of
//   them with no delivered or read status between suppress the number (`invalid`).
// Set-based: a handful of statements per account, whatever the number of failures.

export const OPTED_OUT_CODE = '131050';
export const UNDELIVERABLE_CODE = '131026';
// docs/decisions.md: one 131026 is often a phone that is off or an old app; three in a row, with
// nothing delivered between, is a number that does not take WhatsApp messages.
export const UNDELIVERABLE_IN_A_ROW = 3;

export interface WhatsAppRecipientFailure {
  accountId: string;
  // The number: E.164 digits (`4915112855001`, as a message's `to` is) or with its +.
  to: string;
  // The contact the message was for, when known.
  contactId: string | null;
  // Graph's error code: 131050 or 131026 (any other is passed over).
  code: string | number;
  // What it came from, kept as the suppression's source: `message:<id>`.
  source: string | null;
}

// The code of a stored failure (`131026: Message undeliverable (…)`), else null.
export function failureCodeOf(error: string | null | undefined): string | null {
  return /^(\d+):/.exec(error ?? '')?.[1] ?? null;
}

export interface RecordOptions {
  now: Date;
  // `send` (Graph's answer to a send) or `status` (the status webhook): the opt-outs' metric label.
  via?: Exclude<WhatsAppOptOutSource, 'keyword'>;
  metrics?: WhatsAppInboundMetrics;
  // Given: the events are added here, for the caller to record last, before its COMMIT.
  // Absent: recorded here, at the end.
  events?: Map<string, NewEventOf[]>;
}

// In the caller's transaction. Answers the opt-outs (131050) it took, and the numbers it
// suppressed as invalid now.
export async function recordWhatsAppRecipientFailures(
  db: Database,
  failures: readonly WhatsAppRecipientFailure[],
  options: RecordOptions,
  transaction: Transaction,
): Promise<{ optedOut: number; invalid: number }> {
  const events = options.events ?? new Map<string, NewEventOf[]>();
  let optedOut = 0;
  let invalid = 0;
  for (const accountId of new Set(failures.map((failure) => failure.accountId))) {
    const mine = failures.filter((failure) => failure.accountId === accountId);
    const stops = mine.filter((failure) => String(failure.code) === OPTED_OUT_CODE);
    optedOut += stops.length;
    await optOutWhatsAppNumbers(
      db,
      accountId,
      stops.map((failure) => ({ to: failure.to, contactId: failure.contactId, source: failure.source })),
      { ...options, events },
      transaction,
    );
    const undeliverable = mine.filter((failure) => String(failure.code) === UNDELIVERABLE_CODE);
    invalid += await countUndeliverable(db, accountId, undeliverable, { ...options, events }, transaction);
  }
  if (!options.events) for (const accountId of [...events.keys()].sort()) await recordEvents(db, accountId, events.get(accountId)!, transaction);
  const count = () => {
    if (optedOut > 0) options.metrics?.optOuts.inc({ source: options.via ?? 'status' }, optedOut);
    if (invalid > 0) options.metrics?.invalidNumbers.inc(invalid);
  };
  if (options.metrics) transaction.afterCommit(count);
  return { optedOut, invalid };
}

// A delivered or read message to these numbers: their count of 131026 in a row starts again.
// One conditional UPDATE per account (rows already at 0 are not written).
export async function resetWhatsAppRecipientFailures(
  db: Database,
  reached: ReadonlyArray<{ accountId: string; to: string }>,
  options: { now: Date },
  transaction: Transaction,
): Promise<void> {
  for (const accountId of new Set(reached.map((item) => item.accountId))) {
    const addresses = [...new Set(reached.filter((item) => item.accountId === accountId).map((item) => e164(item.to)))].sort();
    await execute(
      db,
      'UPDATE whatsapp_recipient_failures SET consecutive = 0, updated_at = ? WHERE account_id = ? AND address IN (?) AND consecutive > 0',
      [options.now, accountId, addresses],
      transaction,
    );
  }
}

// Opts these numbers out for the account: each suppressed (`opt_out`, with the contact named
// or else the first found), and every contact of the account with the number unsubscribed from
// WhatsApp (one lookup, one write). Answers how many numbers were suppressed now (a number
// suppressed already counts no more; its contacts are still unsubscribed).
export async function optOutWhatsAppNumbers(
  db: Database,
  accountId: string,
  numbers: ReadonlyArray<{ to: string; contactId: string | null; source: string | null }>,
  options: { now: Date; events: Map<string, NewEventOf[]> },
  transaction: Transaction,
): Promise<number> {
  if (numbers.length === 0) return 0;
  const byNumber = await contactsByPhoneDigits(db, accountId, numbers.map((item) => digits(item.to)), transaction);
  const contactIds = new Set<string>();
  const items: NewSuppression[] = numbers.map((item) => {
    const found = byNumber.get(digits(item.to)) ?? [];
    for (const id of [...(item.contactId ? [item.contactId] : []), ...found]) contactIds.add(id);
    return { channel: 'whatsapp', address: e164(item.to), reason: 'opt_out', source: item.source, contactId: item.contactId ?? found[0] ?? null };
  });
  // Contacts first (they are locked as every contact writer locks them), then the list.
  const changes = await unsubscribeFromWhatsApp(db, accountId, [...contactIds], options, transaction);
  collect(options.events, accountId, changes);
  const { added } = await addSuppressions(db, accountId, items, { now: options.now, events: options.events }, transaction);
  return added.length;
}

// +1 per 131026 to each number's row; then those that reached UNDELIVERABLE_IN_A_ROW are
// suppressed (`invalid`).
async function countUndeliverable(
  db: Database,
  accountId: string,
  failures: readonly WhatsAppRecipientFailure[],
  options: { now: Date; events: Map<string, NewEventOf[]> },
  transaction: Transaction,
): Promise<number> {
  if (failures.length === 0) return 0;
  const perNumber = new Map<string, WhatsAppRecipientFailure[]>();
  for (const failure of failures) perNumber.set(e164(failure.to), [...(perNumber.get(e164(failure.to)) ?? []), failure]);
  const addresses = [...perNumber.keys()].sort();
  // One statement: a new row starts at the count, an existing one adds it (in the database,
  // so that concurrent posts about one number add up).
  const increment =
    db.dialect === 'sqlite'
      ? ' ON CONFLICT (account_id, address) DO UPDATE SET consecutive = whatsapp_recipient_failures.consecutive + excluded.consecutive, updated_at = excluded.updated_at'
      : ' ON DUPLICATE KEY UPDATE consecutive = consecutive + VALUES(consecutive), updated_at = VALUES(updated_at)';
  await execute(
    db,
    `INSERT INTO whatsapp_recipient_failures (account_id, address, consecutive, updated_at) VALUES ${addresses.map(() => '(?, ?, ?, ?)').join(', ')}${increment}`,
    addresses.flatMap((address) => [accountId, address, perNumber.get(address)!.length, options.now]),
    transaction,
  );
  const reached = await select<{ address: string }>(
    db,
    'SELECT address FROM whatsapp_recipient_failures WHERE account_id = ? AND address IN (?) AND consecutive >= ?',
    [accountId, addresses, UNDELIVERABLE_IN_A_ROW],
    transaction,
  );
  if (reached.length === 0) return 0;
  const items: NewSuppression[] = reached.map(({ address }) => {
    const last = perNumber.get(address)!.at(-1)!;
    return { channel: 'whatsapp', address, reason: 'invalid', source: last.source, contactId: last.contactId };
  });
  const { added } = await addSuppressions(db, accountId, items, { now: options.now, events: options.events }, transaction);
  return added.length;
}

const digits = (to: string) => to.replace(/^\+/, '');
const e164 = (to: string) => `+${digits(to)}`;

function collect(events: Map<string, NewEventOf[]>, accountId: string, list: readonly NewEventOf[]) {
  if (list.length > 0) events.set(accountId, [...(events.get(accountId) ?? []), ...list]);
}
