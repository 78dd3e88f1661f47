import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError, ValidationError, type IssueDetail } from '../../errors/app-errors';
import { MESSAGE_CHANNELS, type MessageChannel } from '../../schemas/message';
import type { SuppressionDto, SuppressionReason } from '../../schemas/suppression';
import { isEmailAddress } from '../../schemas/text';
import type { CursorScope } from '../lists/cursor';
import { afterPosition, orderBy, readThrough, startPosition, toPage, type Page, type PageRequest } from '../lists/keyset';
import {
  addSuppressions,
  findSuppression,
  normalizeSuppressionAddress,
  removeSuppression,
  SUPPRESSION_COLUMNS,
  toSuppressionDto,
  type SuppressionRow,
} from './suppression-store';

// The suppression list as the API, the dashboard and the command line see it
// (docs/channels.md "Suppressions"): the data layer (suppression-store.ts) behind checks that
// name the bad field. `source` says who added it: `api_key:<id>`, `user:<id>`, `cli`.

const NOT_AN_ADDRESS: Record<MessageChannel, string> = {
  email: 'Invalid email address',
  whatsapp: 'Must be a phone number in international form, with its country code (+4915112855001)',
};

// The stored form, or null when it is not an address of the channel. An email is checked as
// contacts' are before it is normalized.
function addressOf(channel: MessageChannel, raw: string): string | null {
  if (channel === 'email' && !isEmailAddress(raw.trim())) return null;
  return normalizeSuppressionAddress(channel, raw);
}

export interface SuppressionItem {
  channel: MessageChannel;
  address: string;
  reason?: SuppressionReason;
}

// 1 to 1,000 items (the schema's bound), checked whole first: one bad address is a 400 naming
// each bad item (`suppressions.N.address`) and nothing is written. Then one transaction for
// all. existing: items whose address was on the list already, or earlier in the same request.
export async function addSuppressionList(
  db: Database,
  input: { accountId: string; suppressions: readonly SuppressionItem[]; source: string; now?: Date },
): Promise<{ total: number; added: number; existing: number }> {
  const details: IssueDetail[] = [];
  const items = input.suppressions.map((item, index) => {
    const address = addressOf(item.channel, item.address);
    if (address === null) details.push({ path: `suppressions.${index}.address`, message: NOT_AN_ADDRESS[item.channel] });
    return { channel: item.channel, address: address ?? '', reason: item.reason ?? 'manual', source: input.source };
  });
  if (details.length > 0) throw new ValidationError(`${details[0]!.path}: ${details[0]!.message}`, details);
  const now = input.now ?? new Date();
  const { added } = await withTransaction(db, (transaction) => addSuppressions(db, input.accountId, items, { now }, transaction));
  return { total: items.length, added: added.length, existing: items.length - added.length };
}

function keyOf(input: { channel: MessageChannel; address: string }): { channel: MessageChannel; address: string } {
  const address = addressOf(input.channel, input.address);
  if (address === null) throw new ValidationError(`address: ${NOT_AN_ADDRESS[input.channel]}`, [{ path: 'address', message: NOT_AN_ADDRESS[input.channel] }]);
  return { channel: input.channel, address };
}

export async function getSuppression(db: Database, input: { accountId: string; channel: MessageChannel; address: string }): Promise<SuppressionDto> {
  const row = await findSuppression(db, input.accountId, keyOf(input));
  if (!row) throw new NotFoundError('Suppression');
  return toSuppressionDto(row);
}

// Lifts it: the next message step to the address sends again. Records contact.unsuppressed.
export async function deleteSuppression(db: Database, input: { accountId: string; channel: MessageChannel; address: string }): Promise<SuppressionDto> {
  const key = keyOf(input);
  const row = await withTransaction(db, (transaction) => removeSuppression(db, input.accountId, key, transaction));
  if (!row) throw new NotFoundError('Suppression');
  return toSuppressionDto(row);
}

// Newest first by (created_at, id), through suppressions_listed; channel and reason filter
// the walk (an account's list is its bounces and opt-outs: a second index per filter is not
// worth its writes). `address` is one address, looked up by the unique key: in the channel
// given, or in each channel it is an address of (an email, a phone number).
export async function listSuppressions(
  db: Database,
  input: { accountId: string; channel?: MessageChannel; reason?: SuppressionReason; address?: string } & PageRequest,
): Promise<Page<SuppressionDto>> {
  const scope: CursorScope = { list: 'suppressions', accountId: input.accountId, filters: { channel: input.channel, reason: input.reason, address: input.address } };
  const after = afterPosition('created_at', 'id', 'DESC', startPosition(scope, input));
  const where: string[] = ['account_id = ?'];
  const values: unknown[] = [input.accountId];
  let from = readThrough(db, 'suppressions', 's', 'suppressions_listed');
  if (input.address !== undefined) {
    const keys = (input.channel ? [input.channel] : MESSAGE_CHANNELS)
      .map((channel) => ({ channel, address: addressOf(channel, input.address!) }))
      .filter((key): key is { channel: MessageChannel; address: string } => key.address !== null);
    if (keys.length === 0) {
      const message = input.channel ? NOT_AN_ADDRESS[input.channel] : 'Must be an email address or a phone number in international form (+4915112855001)';
      throw new ValidationError(`address: ${message}`, [{ path: 'address', message }]);
    }
    where.push(`(${keys.map(() => '(channel = ? AND address = ?)').join(' OR ')})`);
    values.push(...keys.flatMap((key) => [key.channel, key.address]));
    from = 'suppressions s';
  } else if (input.channel) {
    where.push('channel = ?');
    values.push(input.channel);
  }
  if (input.reason) {
    where.push('reason = ?');
    values.push(input.reason);
  }
  const rows = await select<SuppressionRow>(
    db,
    `SELECT ${SUPPRESSION_COLUMNS} FROM ${from} WHERE ${where.join(' AND ')}${after.sql}${orderBy('created_at', 'id', 'DESC')} LIMIT ?`,
    [...values, ...after.values, input.limit + 1],
  );
  return toPage(scope, input, rows, { position: (row) => ({ at: row.created_at, id: row.id }), item: toSuppressionDto });
}
