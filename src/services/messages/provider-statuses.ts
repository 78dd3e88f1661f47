import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { MessageChannel, ProviderStatus } from '../../schemas/message';
import type { MessageTransition } from './message-events';
import { applyStatusChanges, type StatusChange, type StoreOptions } from './message-store';

// What a provider reports about messages it took (WhatsApp's status webhook), applied forward
// only (src/schemas/message.ts): a late `delivered` leaves a read message read, a repeat
// changes nothing, an unknown id is ignored.

export interface ProviderStatusUpdate {
  channel: MessageChannel;
  providerMessageId: string;
  // The message key the provider echoes back (WhatsApp's biz_opaque_callback_data), when it
  // does: it finds a message whose provider id is not written yet (a report that overtook the
  // `sent` the sender records after the provider's answer).
  messageKey?: string | null;
  status: ProviderStatus;
  // When it happened, as the provider says.
  at: Date;
  // For `failed`: the provider's code and text (`131026: Message undeliverable`).
  error?: string | null;
}

export interface AppliedStatuses {
  // Updates that named a message of ours.
  matched: number;
  // Updates that named none (another system's messages, or ones deleted since).
  unknown: number;
  transitions: MessageTransition[];
}

export async function applyProviderStatuses(
  db: Database,
  updates: readonly ProviderStatusUpdate[],
  options: StoreOptions,
  transaction: Transaction,
): Promise<AppliedStatuses> {
  if (updates.length === 0) return { matched: 0, unknown: 0, transitions: [] };
  const found = await findMessages(db, updates, transaction);
  const changes: StatusChange[] = [];
  let unknown = 0;
  for (const update of updates) {
    const id = found.byProviderId.get(`${update.channel}\n${update.providerMessageId}`) ?? byKeyOnChannel(found, update);
    if (!id) {
      unknown += 1;
      continue;
    }
    changes.push({ id, status: update.status, at: update.at, providerMessageId: update.providerMessageId, error: update.error ?? null });
  }
  const transitions = await applyStatusChanges(db, changes, options, transaction);
  return { matched: changes.length, unknown, transitions };
}

// A key names a message of one channel: a key echoed by another channel's provider names none.
function byKeyOnChannel(found: Awaited<ReturnType<typeof findMessages>>, update: ProviderStatusUpdate): string | undefined {
  const match = update.messageKey ? found.byKey.get(update.messageKey) : undefined;
  return match && found.channelOf.get(match) === update.channel ? match : undefined;
}

// The messages the updates name, by (channel, provider id) and by message key: one statement
// per channel (an index range per id), one for the keys.
async function findMessages(db: Database, updates: readonly ProviderStatusUpdate[], transaction: Transaction) {
  const byProviderId = new Map<string, string>();
  const byKey = new Map<string, string>();
  const channelOf = new Map<string, string>();
  for (const channel of [...new Set(updates.map((update) => update.channel))]) {
    const ids = [...new Set(updates.filter((update) => update.channel === channel).map((update) => update.providerMessageId))];
    const rows = await select<{ id: string; provider_message_id: string }>(
      db,
      'SELECT id, provider_message_id FROM messages WHERE channel = ? AND provider_message_id IN (?)',
      [channel, ids],
      transaction,
    );
    for (const row of rows) byProviderId.set(`${channel}\n${row.provider_message_id}`, row.id);
  }
  const keys = [...new Set(updates.flatMap((update) => (update.messageKey ? [update.messageKey] : [])))];
  if (keys.length > 0) {
    const rows = await select<{ id: string; message_key: string; channel: string }>(
      db,
      'SELECT id, message_key, channel FROM messages WHERE message_key IN (?)',
      [keys],
      transaction,
    );
    for (const row of rows) {
      byKey.set(row.message_key, row.id);
      channelOf.set(row.id, row.channel);
    }
  }
  return { byProviderId, byKey, channelOf };
}
