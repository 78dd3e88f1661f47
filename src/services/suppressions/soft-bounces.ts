import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { SOFT_BOUNCE_PREFIX } from '../messages/send-failures';
import { normalizeSuppressionAddress, type NewSuppression } from './suppression-store';

// Soft bounces that keep coming (docs/channels.md "Bounces, classified"; docs/decisions.md): a
// message whose every attempt the receiving server put off (a 4xx on RCPT or after the data,
// `deferred: …`) fails once its retry schedule is spent. When the last SOFT_BOUNCE_STREAK
// messages to an address, within SOFT_BOUNCE_WINDOW_DAYS, all failed that way, with no message
// taken in between, the address is suppressed as a hard bounce: the mailbox is full for good,
// or the domain's server never takes it. Decided from the messages table, in the outcome's
// transaction: one read for the batch's addresses, whatever their number.

export const SOFT_BOUNCE_STREAK = 3;
export const SOFT_BOUNCE_WINDOW_DAYS = 30;

export async function softBounceSuppressions(
  db: Database,
  failed: ReadonlyArray<{ accountId: string; contactId: string; address: string; messageId: string }>,
  now: Date,
  transaction: Transaction,
): Promise<Array<{ accountId: string; item: NewSuppression }>> {
  if (failed.length === 0) return [];
  const since = new Date(now.getTime() - SOFT_BOUNCE_WINDOW_DAYS * 86_400_000);
  const rows = await select<{ contact_id: string; to_address: string; status: string; error: string | null; created_at: unknown }>(
    db,
    `SELECT contact_id, to_address, status, error, created_at FROM messages
     WHERE contact_id IN (?) AND channel = 'email' AND test = ? AND created_at >= ?`,
    [[...new Set(failed.map((item) => item.contactId))], false, since],
    transaction,
  );
  const found: Array<{ accountId: string; item: NewSuppression }> = [];
  for (const item of failed) {
    const address = normalizeSuppressionAddress('email', item.address);
    if (!address) continue;
    const recent = rows
      .filter((row) => row.contact_id === item.contactId && normalizeSuppressionAddress('email', row.to_address) === address)
      .sort((a, b) => toDate(b.created_at).getTime() - toDate(a.created_at).getTime())
      .slice(0, SOFT_BOUNCE_STREAK);
    const streak = recent.length === SOFT_BOUNCE_STREAK && recent.every((row) => row.status === 'failed' && (row.error ?? '').startsWith(SOFT_BOUNCE_PREFIX));
    if (streak) found.push({ accountId: item.accountId, item: { channel: 'email', address, reason: 'hard_bounce', source: `message:${item.messageId}`, contactId: item.contactId } });
  }
  return found;
}
