import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { ChannelSettings } from './channel-settings';
import { cappedRate } from './rates';

// The rate in force per account for one channel, as the throttle of the outbound layer needs
// it (engine/outbound/send-throttle.ts): one statement for any number of accounts, no secret
// read. An account with no settings sends at the server-wide limit.
export async function senderRates(
  db: Database,
  channel: 'email' | 'whatsapp',
  accountIds: readonly string[],
  settings: Pick<ChannelSettings, 'emailMaxPerSecond' | 'whatsappMaxPerSecond'>,
): Promise<Map<string, number>> {
  const unique = [...new Set(accountIds)];
  if (unique.length === 0) return new Map();
  const table = channel === 'email' ? 'email_channels' : 'whatsapp_channels';
  const serverLimit = channel === 'email' ? settings.emailMaxPerSecond : settings.whatsappMaxPerSecond;
  const rows = await select<{ account_id: string; max_per_second: number | string | null }>(
    db,
    `SELECT account_id, max_per_second FROM ${table} WHERE account_id IN (?)`,
    [unique],
  );
  const set = new Map(rows.map((row) => [row.account_id, row.max_per_second === null ? null : Number(row.max_per_second)]));
  return new Map(unique.map((accountId) => [accountId, cappedRate(set.get(accountId) ?? null, serverLimit)]));
}
