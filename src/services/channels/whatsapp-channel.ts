import type { Database } from '../../db/database';
import { execute, select, upsertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { notifyDueWork } from '../engine/due-work';
import { resumeChannelPauses } from './channel-pauses';
import { ValidationError } from '../../errors/app-errors';
import type { WhatsAppChannelDto, WhatsAppChannelInput } from '../../schemas/channel';
import { sealChannelSecret } from './channel-secrets';
import type { ChannelSettings } from './channel-settings';
import { assertWithinCap } from './email-channel';
import { cappedRate } from './rates';

// GET and PUT /channels/whatsapp (docs/channels.md "WhatsApp").

export interface WhatsAppChannelRow {
  account_id: string;
  phone_number_id: string;
  access_token_secret: string;
  access_token_last4: string;
  max_per_second: number | null;
}

export async function whatsappChannelRows(db: Database, accountIds: readonly string[]): Promise<Map<string, WhatsAppChannelRow>> {
  if (accountIds.length === 0) return new Map();
  const rows = await select<WhatsAppChannelRow>(
    db,
    'SELECT account_id, phone_number_id, access_token_secret, access_token_last4, max_per_second FROM whatsapp_channels WHERE account_id IN (?)',
    [accountIds],
  );
  return new Map(rows.map((row) => [row.account_id, row]));
}

export function toWhatsAppChannelDto(row: WhatsAppChannelRow | undefined, settings: ChannelSettings): WhatsAppChannelDto {
  return {
    configured: Boolean(row),
    phoneNumberId: row?.phone_number_id ?? null,
    accessToken: { configured: Boolean(row), last4: row?.access_token_last4 ?? null },
    maxPerSecond: cappedRate(row?.max_per_second ?? null, settings.whatsappMaxPerSecond),
  };
}

export async function getWhatsAppChannel(db: Database, input: { accountId: string }, settings: ChannelSettings): Promise<WhatsAppChannelDto> {
  const rows = await whatsappChannelRows(db, [input.accountId]);
  return toWhatsAppChannelDto(rows.get(input.accountId), settings);
}

const TOKEN_REQUIRED = 'is required: the account has no token yet';

export async function putWhatsAppChannel(
  db: Database,
  input: { accountId: string } & WhatsAppChannelInput,
  settings: ChannelSettings,
): Promise<WhatsAppChannelDto> {
  assertWithinCap('maxPerSecond', input.maxPerSecond, settings.whatsappMaxPerSecond, 'WHATSAPP_MAX_PER_SECOND');
  const now = new Date();
  const rate = input.maxPerSecond === undefined ? [] : [['max_per_second', input.maxPerSecond] as const];
  if (input.accessToken === undefined) {
    // Only a change to a stored token's settings: the row must be there already.
    const updated = await withTransaction(db, (transaction) =>
      execute(
        db,
        `UPDATE whatsapp_channels SET phone_number_id = ?, ${rate.map(([column]) => `${column} = ?, `).join('')}updated_at = ? WHERE account_id = ?`,
        [input.phoneNumberId, ...rate.map(([, value]) => value), now, input.accountId],
        transaction,
      ),
    );
    if (updated === 0) throw new ValidationError(`accessToken: ${TOKEN_REQUIRED}`, [{ path: 'accessToken', message: TOKEN_REQUIRED }]);
    await resumeAfterSave(db, input.accountId);
    return getWhatsAppChannel(db, input, settings);
  }
  const token = input.accessToken;
  const sealed = sealChannelSecret(settings, input.accountId, 'whatsapp_channels.access_token_secret', token);
  const changed = ['phone_number_id', 'access_token_secret', 'access_token_last4', ...rate.map(([column]) => column), 'updated_at'];
  await withTransaction(db, (transaction) =>
    upsertRows(
      db,
      'whatsapp_channels',
      ['account_id', 'phone_number_id', 'access_token_secret', 'access_token_last4', 'max_per_second', 'created_at', 'updated_at'],
      [[input.accountId, input.phoneNumberId, sealed, token.slice(-4), input.maxPerSecond ?? null, now, now]],
      ['account_id'],
      changed,
      transaction,
    ),
  );
  await resumeAfterSave(db, input.accountId);
  return getWhatsAppChannel(db, input, settings);
}

// Saved settings are the sender's answer to a pause: the channel (and its templates) send again
// (channel-pauses.ts).
async function resumeAfterSave(db: Database, accountId: string): Promise<void> {
  const resumed = await withTransaction(db, (transaction) => resumeChannelPauses(db, { accountId, channel: 'whatsapp', by: 'settings' }, transaction));
  if (resumed.length > 0) notifyDueWork();
}
