import { createHash } from 'node:crypto';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { ActivitySettings } from '../activities/activity-settings';
import type { ProviderStatusUpdate } from '../messages/provider-statuses';
import type { InboundMessage } from '../messages/whatsapp-inbound';
import { recordSignals, type Signal } from './record-signals';

// WhatsApp's engagement signals (docs/activities.md "Engagement signals"), from the status and
// message webhook, recorded after the post's own writes have committed:
// - `whatsapp.read`, id `whatsapp.read:<wamid>`: a `read` status of a message of ours (a test
//   send's aside). Recorded from every trusted `read` in the post, not only from statuses that
//   moved the message: Meta posts again what we failed to answer, and a status applied before
//   the failure moves nothing the second time; the id makes the repeat a no-op.
// - `whatsapp.replied`, id `whatsapp.replied:<wamid>` (`:<contactId>` added when several contacts
//   of the account have the number): a message from a contact that is not an opt-out (the
//   opt-out keywords keep their own handling). Its text at most 1,024 characters, and the
//   message it answers (below).
// A wamid that is not an activity id's characters ([A-Za-z0-9_.:-], within 128 with its prefix)
// is named by its SHA-256 instead (`h` and 32 characters of base64url).

const MAX_REPLY_TEXT = 1024;
const ID_CHARS = /^[A-Za-z0-9_.:-]+$/;

function wamidRef(wamid: string, room: number): string {
  if (ID_CHARS.test(wamid) && wamid.length <= room) return wamid;
  return `h${createHash('sha256').update(wamid).digest('base64url').slice(0, 32)}`;
}

interface SentRow {
  id: string;
  account_id: string;
  contact_id: string;
  run_id: string | null;
  sequence_id: string | null;
  step_id: string | null;
  provider_message_id: string | null;
  message_key: string;
}

const SENT_COLUMNS = 'id, account_id, contact_id, run_id, sequence_id, step_id, provider_message_id, message_key';

async function sentMessages(db: Database, wamids: readonly string[], keys: readonly string[]): Promise<SentRow[]> {
  const byId = wamids.length === 0 ? [] : await select<SentRow>(db, `SELECT ${SENT_COLUMNS} FROM messages WHERE channel = 'whatsapp' AND provider_message_id IN (?) AND test = ?`, [wamids, false]);
  const byKey = keys.length === 0 ? [] : await select<SentRow>(db, `SELECT ${SENT_COLUMNS} FROM messages WHERE message_key IN (?) AND channel = 'whatsapp' AND test = ?`, [keys, false]);
  return [...byId, ...byKey];
}

const aboutMessage = (row: SentRow) => ({ messageId: row.id, sequenceId: row.sequence_id, stepId: row.step_id, runId: row.run_id });

// The `read` statuses the post's signature spoke for (applyWhatsAppStatuses' `trusted`).
export async function recordWhatsAppReads(db: Database, updates: readonly ProviderStatusUpdate[], settings: ActivitySettings): Promise<number> {
  const reads = updates.filter((update) => update.channel === 'whatsapp' && update.status === 'read');
  if (reads.length === 0) return 0;
  const rows = await sentMessages(
    db,
    [...new Set(reads.map((update) => update.providerMessageId))],
    [...new Set(reads.flatMap((update) => (update.messageKey ? [update.messageKey] : [])))],
  );
  const byWamid = new Map(rows.flatMap((row) => (row.provider_message_id ? [[row.provider_message_id, row] as const] : [])));
  const byKey = new Map(rows.map((row) => [row.message_key, row]));
  const signals = new Map<string, Signal>();
  for (const update of reads) {
    const row = byWamid.get(update.providerMessageId) ?? (update.messageKey ? byKey.get(update.messageKey) : undefined);
    if (!row) continue;
    const id = `whatsapp.read:${wamidRef(update.providerMessageId, 128 - 'whatsapp.read:'.length)}`;
    if (signals.has(id)) continue;
    signals.set(id, {
      accountId: row.account_id,
      contactId: row.contact_id,
      id,
      name: 'whatsapp.read',
      properties: { ...aboutMessage(row), providerMessageId: update.providerMessageId },
      occurredAt: update.at,
    });
  }
  return recordSignals(db, [...signals.values()], settings);
}

// The latest WhatsApp message each contact was sent (not a test send): what an unquoted reply
// answers, as far as anyone can tell. One statement for the batch.
async function latestSent(db: Database, accountId: string, contactIds: readonly string[]): Promise<Map<string, SentRow>> {
  if (contactIds.length === 0) return new Map();
  const rows = await select<SentRow & { sent_at: unknown }>(
    db,
    `SELECT ${SENT_COLUMNS.split(', ').map((column) => `m.${column}`).join(', ')}, m.sent_at FROM messages m
      WHERE m.contact_id IN (?) AND m.account_id = ? AND m.channel = 'whatsapp' AND m.test = ? AND m.sent_at IS NOT NULL
        AND m.sent_at = (SELECT MAX(x.sent_at) FROM messages x WHERE x.contact_id = m.contact_id AND x.channel = 'whatsapp' AND x.test = ? AND x.sent_at IS NOT NULL)`,
    [contactIds, accountId, false, false],
  );
  const latest = new Map<string, SentRow>();
  // Two sent in the same millisecond: the greater id, so that a retry finds the same one.
  for (const row of rows) if (!latest.has(row.contact_id) || latest.get(row.contact_id)!.id < row.id) latest.set(row.contact_id, row);
  return latest;
}

// One account's replies: each message with the contacts of its number (receiveWhatsAppMessages).
// The message it answers: the one it quotes (context.id) when that is ours and the contact's
// (`repliedTo: "quoted"`), else the latest one the contact was sent (`repliedTo: "latest"`),
// else none.
export async function recordWhatsAppReplies(
  db: Database,
  accountId: string,
  replies: ReadonlyArray<{ message: InboundMessage; contactIds: readonly string[] }>,
  settings: ActivitySettings,
): Promise<number> {
  if (replies.length === 0) return 0;
  const contexts = [...new Set(replies.flatMap(({ message }) => (message.context ? [message.context] : [])))];
  const quoted = new Map((await sentMessages(db, contexts, [])).filter((row) => row.account_id === accountId).map((row) => [row.provider_message_id!, row]));
  const latest = await latestSent(db, accountId, [...new Set(replies.flatMap(({ contactIds }) => contactIds))]);
  const signals: Signal[] = [];
  for (const { message, contactIds } of replies) {
    const several = contactIds.length > 1;
    const ref = wamidRef(message.id, 128 - 'whatsapp.replied:'.length - (several ? 37 : 0));
    for (const contactId of contactIds) {
      const own = message.context ? quoted.get(message.context) : undefined;
      const answered = own && own.contact_id === contactId ? { row: own, how: 'quoted' } : latest.has(contactId) ? { row: latest.get(contactId)!, how: 'latest' } : null;
      signals.push({
        accountId,
        contactId,
        id: several ? `whatsapp.replied:${ref}:${contactId}` : `whatsapp.replied:${ref}`,
        name: 'whatsapp.replied',
        properties: {
          providerMessageId: message.id,
          from: `+${message.from}`,
          type: message.type,
          text: message.text === null ? null : message.text.slice(0, MAX_REPLY_TEXT),
          payload: message.payload,
          ...(answered ? { ...aboutMessage(answered.row), repliedTo: answered.how } : {}),
        },
        occurredAt: message.at,
      });
    }
  }
  return recordSignals(db, signals, settings);
}
