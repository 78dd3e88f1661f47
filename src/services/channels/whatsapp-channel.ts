import type { Database } from '../../db/database';
import { execute, select, upsertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { parseJson } from '../../db/sql/rows';
import { notifyDueWork } from '../runs/due-work';
import { resumeChannelPauses } from './channel-pauses';
import { ValidationError } from '../../errors/app-errors';
import type { WhatsAppChannelDto, WhatsAppChannelInput } from '../../schemas/channel';
import { DEFAULT_OPT_OUT_KEYWORDS, optOutKey } from '../../schemas/opt-out-keywords';
import { sealChannelSecret, verifyTokenHash } from './channel-secrets';
import type { ChannelSettings } from './channel-settings';
import { assertWithinCap } from './email-channel';
import { cappedRate } from './rates';
import { FREQUENCY_CAP_COLUMNS, frequencyCapValues, toFrequencyCapDto, type FrequencyCapColumns } from './frequency-caps';

// GET and PUT /channels/whatsapp (docs/channels.md "WhatsApp").

export interface WhatsAppChannelRow extends FrequencyCapColumns {
  account_id: string;
  phone_number_id: string;
  access_token_secret: string;
  access_token_last4: string;
  max_per_second: number | null;
  app_secret_secret: string | null;
  verify_token_hash: string | null;
  // A JSON array; null: the defaults.
  opt_out_keywords: unknown;
}

export const WHATSAPP_CHANNEL_COLUMNS =
  'account_id, phone_number_id, access_token_secret, access_token_last4, max_per_second, app_secret_secret, verify_token_hash, opt_out_keywords, ' + FREQUENCY_CAP_COLUMNS;

// The account's opt-out keywords as stored; null: the defaults.
export function storedOptOutKeywords(row: Pick<WhatsAppChannelRow, 'opt_out_keywords'> | undefined): string[] | null {
  return row?.opt_out_keywords === null || row?.opt_out_keywords === undefined ? null : parseJson<string[]>(row.opt_out_keywords);
}

export async function whatsappChannelRows(db: Database, accountIds: readonly string[]): Promise<Map<string, WhatsAppChannelRow>> {
  if (accountIds.length === 0) return new Map();
  const rows = await select<WhatsAppChannelRow>(
    db,
    `SELECT ${WHATSAPP_CHANNEL_COLUMNS} FROM whatsapp_channels WHERE account_id IN (?)`,
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
    appSecret: { configured: Boolean(row?.app_secret_secret) },
    verifyToken: { configured: Boolean(row?.verify_token_hash) },
    optOutKeywords: storedOptOutKeywords(row) ?? [...DEFAULT_OPT_OUT_KEYWORDS],
    frequencyCap: toFrequencyCapDto(row),
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
  // The optional settings the input names (null clears one): only those are written.
  const optional = optionalColumns(input, settings);
  if (input.accessToken === undefined) {
    // Only a change to a stored token's settings: the row must be there already.
    const updated = await withTransaction(db, (transaction) =>
      execute(
        db,
        `UPDATE whatsapp_channels SET phone_number_id = ?, ${optional.map(([column]) => `${column} = ?, `).join('')}updated_at = ? WHERE account_id = ?`,
        [input.phoneNumberId, ...optional.map(([, value]) => value), now, input.accountId],
        transaction,
      ),
    );
    if (updated === 0) throw new ValidationError(`accessToken: ${TOKEN_REQUIRED}`, [{ path: 'accessToken', message: TOKEN_REQUIRED }]);
    await resumeAfterSave(db, input.accountId);
    return getWhatsAppChannel(db, input, settings);
  }
  const token = input.accessToken;
  const sealed = sealChannelSecret(settings, input.accountId, 'whatsapp_channels.access_token_secret', token);
  const given = new Map(optional);
  const changed = ['phone_number_id', 'access_token_secret', 'access_token_last4', ...optional.map(([column]) => column), 'updated_at'];
  await withTransaction(db, (transaction) =>
    upsertRows(
      db,
      'whatsapp_channels',
      ['account_id', 'phone_number_id', 'access_token_secret', 'access_token_last4', ...OPTIONAL, 'created_at', 'updated_at'],
      [[input.accountId, input.phoneNumberId, sealed, token.slice(-4), ...OPTIONAL.map((column) => given.get(column) ?? null), now, now]],
      ['account_id'],
      changed,
      transaction,
    ),
  );
  await resumeAfterSave(db, input.accountId);
  return getWhatsAppChannel(db, input, settings);
}

const OPTIONAL = ['max_per_second', 'app_secret_secret', 'verify_token_hash', 'opt_out_keywords', 'frequency_cap_max', 'frequency_cap_per', 'frequency_cap_when'] as const;

// Each optional field the input names, as its column's value. The app secret is sealed as the
// token is; the verify token kept as its keyed hash; the keywords trimmed, each once.
function optionalColumns(input: { accountId: string } & WhatsAppChannelInput, settings: ChannelSettings): Array<[(typeof OPTIONAL)[number], unknown]> {
  const columns: Array<[(typeof OPTIONAL)[number], unknown]> = [];
  if (input.maxPerSecond !== undefined) columns.push(['max_per_second', input.maxPerSecond]);
  if (input.appSecret !== undefined) {
    columns.push(['app_secret_secret', input.appSecret === null ? null : sealChannelSecret(settings, input.accountId, 'whatsapp_channels.app_secret_secret', input.appSecret)]);
  }
  if (input.verifyToken !== undefined) columns.push(['verify_token_hash', input.verifyToken === null ? null : verifyTokenHash(settings, input.verifyToken)]);
  if (input.optOutKeywords !== undefined) {
    const unique = input.optOutKeywords === null ? null : [...new Map(input.optOutKeywords.map((keyword) => [optOutKey(keyword), keyword])).values()];
    columns.push(['opt_out_keywords', unique === null ? null : JSON.stringify(unique)]);
  }
  columns.push(...frequencyCapValues(input.frequencyCap));
  return columns;
}

// Saved settings are the sender's answer to a pause: the channel (and its templates) send again
// (channel-pauses.ts).
async function resumeAfterSave(db: Database, accountId: string): Promise<void> {
  const resumed = await withTransaction(db, (transaction) => resumeChannelPauses(db, { accountId, channel: 'whatsapp', by: 'settings' }, transaction));
  if (resumed.length > 0) notifyDueWork();
}
