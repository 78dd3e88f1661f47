import { Duration } from 'luxon';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { FrequencyCapDto, FrequencyCapInput, WhenCapped } from '../../schemas/frequency-cap';
import type { MessageChannel } from '../../schemas/message';
import { checkDuration } from '../runs/schedule/durations';

// The channels' frequency caps as stored (three columns of email_channels and
// whatsapp_channels, db/migrations/20261227000100-add-frequency-caps.js): how PUT writes them,
// how GET shows them, and how the engine reads them for a batch (engine/frequency-cap-gate.ts).

export interface FrequencyCapColumns {
  frequency_cap_max: number | string | null;
  frequency_cap_per: string | null;
  frequency_cap_when: string | null;
}

export const FREQUENCY_CAP_COLUMNS = 'frequency_cap_max, frequency_cap_per, frequency_cap_when';

export function toFrequencyCapDto(row: Partial<FrequencyCapColumns> | undefined): FrequencyCapDto {
  if (!row || row.frequency_cap_max === null || row.frequency_cap_max === undefined || !row.frequency_cap_per || !row.frequency_cap_when) return null;
  return { max: Number(row.frequency_cap_max), per: row.frequency_cap_per, whenCapped: row.frequency_cap_when as WhenCapped };
}

// The columns a PUT writes, checked: none when the field is left out (the stored cap is kept),
// all three NULL for null. `per` must be a duration the engine can count back by.
export function frequencyCapValues(cap: FrequencyCapInput | null | undefined): Array<[keyof FrequencyCapColumns, unknown]> {
  if (cap === undefined) return [];
  if (cap === null) return [['frequency_cap_max', null], ['frequency_cap_per', null], ['frequency_cap_when', null]];
  const checked = checkDuration(cap.per);
  if (!checked.ok) throw new ValidationError(`frequencyCap.per: ${checked.message}`, [{ path: 'frequencyCap.per', message: checked.message }]);
  return [['frequency_cap_max', cap.max], ['frequency_cap_per', cap.per], ['frequency_cap_when', cap.whenCapped]];
}

// A cap as the engine applies it: the window in milliseconds (luxon's casual lengths: a day
// is 24 hours, a month 30 days; a rolling window is elapsed time, not a calendar day).
export interface FrequencyCap {
  max: number;
  perMs: number;
  whenCapped: WhenCapped;
}

const TABLES: Record<MessageChannel, string> = { email: 'email_channels', whatsapp: 'whatsapp_channels' };

// The caps of these accounts on each channel, by `${accountId} ${channel}`: one statement per
// channel asked for. Accounts without a cap are absent.
export async function frequencyCapsOf(
  db: Database,
  wanted: ReadonlyArray<{ accountId: string; channel: MessageChannel }>,
  transaction?: Transaction,
): Promise<Map<string, FrequencyCap>> {
  const caps = new Map<string, FrequencyCap>();
  for (const channel of ['email', 'whatsapp'] as const) {
    const accountIds = [...new Set(wanted.filter((item) => item.channel === channel).map((item) => item.accountId))];
    if (accountIds.length === 0) continue;
    const rows = await select<FrequencyCapColumns & { account_id: string }>(
      db,
      `SELECT account_id, ${FREQUENCY_CAP_COLUMNS} FROM ${TABLES[channel]} WHERE account_id IN (?) AND frequency_cap_max IS NOT NULL`,
      [accountIds],
      transaction,
    );
    for (const row of rows) {
      const dto = toFrequencyCapDto(row);
      if (!dto) continue;
      const perMs = Duration.fromISO(dto.per).toMillis();
      if (!(perMs > 0)) continue;
      caps.set(`${row.account_id} ${channel}`, { max: dto.max, perMs, whenCapped: dto.whenCapped });
    }
  }
  return caps;
}
