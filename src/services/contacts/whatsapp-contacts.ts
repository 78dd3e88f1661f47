import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, select } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import { contactChangeEvents } from '../events/contact-events';
import { cancelRunsOnExit } from '../exit-rules/cancel-on-exit';
import { stateFromRow, toContactDto } from './contact-row';
import { syncContactMirrors } from './contact-mirrors';
import { lockContactRows } from './lock-contacts';

// The contacts a WhatsApp number belongs to, and the opt-out's write on them
// (docs/channels.md "WhatsApp opt-outs and sender health").

// The account's contacts whose phone is one of these numbers (E.164 digits, as WhatsApp's
// `wa_id`), by number. A phone is free text: the database keeps its digits (contacts.phone_digits:
// `+49 151 1285 5001`, `004915112855001` and `4915112855001` are all `4915112855001`), so this is
// one index range per number. Several contacts may share a number: all are answered.
export async function contactsByPhoneDigits(
  db: Database,
  accountId: string,
  numbers: readonly string[],
  transaction?: Transaction,
): Promise<Map<string, string[]>> {
  const byNumber = new Map<string, string[]>();
  if (numbers.length === 0) return byNumber;
  const rows = await select<{ id: string; phone_digits: string }>(
    db,
    'SELECT id, phone_digits FROM contacts WHERE account_id = ? AND phone_digits IN (?)',
    [accountId, [...new Set(numbers)]],
    transaction,
  );
  for (const row of rows) byNumber.set(row.phone_digits, [...(byNumber.get(row.phone_digits) ?? []), row.id]);
  return byNumber;
}

// Sets these contacts' WhatsApp status to unsubscribed, in the caller's transaction and as the
// contacts' other writers do (locked through the email index, the mirrors kept, the exit rules
// met), with one UPDATE for all of them. Answers the events to record (contact.updated and
// contact.subscription_changed with source `whatsapp_opt_out`, and the runs an exit rule
// cancelled); a contact already unsubscribed changes nothing and has none.
export async function unsubscribeFromWhatsApp(
  db: Database,
  accountId: string,
  contactIds: readonly string[],
  options: { now: Date },
  transaction: Transaction,
): Promise<NewEventOf[]> {
  if (contactIds.length === 0) return [];
  const rows = (await lockContactRows(db, accountId, [...new Set(contactIds)], transaction)).filter((row) => row.whatsapp_subscription_status !== 'unsubscribed');
  if (rows.length === 0) return [];
  const now = options.now;
  await execute(
    db,
    "UPDATE contacts SET whatsapp_subscription_status = 'unsubscribed', updated_at = ? WHERE account_id = ? AND id IN (?)",
    [now, accountId, rows.map((row) => row.id)],
    transaction,
  );
  const changes = rows.map((row) => {
    const before = stateFromRow(row);
    const after = { ...before, whatsappSubscriptionStatus: 'unsubscribed' as const };
    return { row, before, after, contact: toContactDto(row.id, after, row.created_at, now) };
  });
  await syncContactMirrors(
    db,
    changes.map(({ row, before }) => ({
      id: row.id,
      accountId,
      tags: before.tags,
      previousTags: before.tags,
      email: before.emailNormalized,
      previousEmail: before.emailNormalized,
      createdAt: row.created_at,
      updatedAt: now,
    })),
    transaction,
  );
  const exits = await cancelRunsOnExit(db, accountId, changes.map(({ row, before, after }) => ({ id: row.id, before, after })), transaction);
  return [...changes.flatMap(({ before, contact }) => contactChangeEvents(before, contact, 'whatsapp_opt_out')), ...exits];
}
