import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate, toIso, toIsoOrNull } from '../../db/sql/rows';
import { execute, forUpdate, insertIgnoringConflicts, select } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import type { MessageChannel } from '../../schemas/message';
import { recordEvents } from '../events/record-events';
import { newRowId } from '../ids';
import { retryDelayMs } from '../webhooks/retry-schedule';

// Paused channels (docs/channels.md "What pauses a channel, and how it resumes"): the sender
// side failed (messages/send-failures.ts: a refused login, a relay that refuses our MAIL FROM,
// TLS, an expired token, a restricted account, a template Graph does not take), so the account's
// channel, or one step's template, stops sending until it is mended. Its sends stay `queued`
// and the dispatchers' claim passes over them (PAUSED_SEND, outbox.ts); its runs wait at their
// step (`waitingFor: "channel_paused"`); no contact is touched. One row per (account, channel,
// scope) in channel_pauses (db/migrations/20261224000100-create-channel-pauses.js): the first
// failure pauses and is told (channel.paused), those that arrive with it find the row.
//
// Resumed (the row deleted, channel.resumed) by: saving the channel's settings (every pause of
// that channel), saving the step's sequence (its template pauses), or a probe that succeeds (a
// login with no message, due on the retry schedule: probe_at).

export type PauseScope = { sequenceId: string; stepId: string } | null;

export interface NewPause {
  channel: MessageChannel;
  // Null: the whole channel; else only that step's template.
  step: PauseScope;
  code: string;
  reason: string;
}

export interface PauseRow {
  id: string;
  account_id: string;
  channel: MessageChannel;
  scope: string;
  sequence_id: string | null;
  step_id: string | null;
  code: string;
  reason: string;
  paused_at: unknown;
  probe_at: unknown;
  probe_attempt: number | string;
}

const COLUMNS = 'id, account_id, channel, scope, sequence_id, step_id, code, reason, paused_at, probe_at, probe_attempt';

export interface ChannelPauseDto {
  channel: MessageChannel;
  code: string;
  reason: string;
  sequenceId: string | null;
  stepId: string | null;
  pausedAt: string;
  nextProbeAt: string | null;
}

export function toChannelPauseDto(row: PauseRow): ChannelPauseDto {
  return {
    channel: row.channel,
    code: row.code,
    reason: row.reason,
    sequenceId: row.sequence_id,
    stepId: row.step_id,
    pausedAt: toIso(row.paused_at),
    nextProbeAt: toIsoOrNull(row.probe_at),
  };
}

const scopeOf = (step: PauseScope) => (step ? `${step.sequenceId}/${step.stepId}` : '');

// A send may go out unless its channel, or its step's template, is paused: the claim's
// condition on an outbox row aliased `o` (one statement whatever the batch: outbox.ts).
export const NOT_PAUSED_SQL = `NOT EXISTS (SELECT 1 FROM channel_pauses p WHERE p.account_id = o.account_id AND p.channel = o.channel
  AND (p.scope = '' OR (p.step_id = o.step_id AND p.sequence_id = (SELECT r.sequence_id FROM sequence_runs r WHERE r.id = o.run_id))))`;

// Pauses (one INSERT that leaves existing pauses alone, one read back); answers those paused
// now, whose channel.paused events are recorded with the caller's (`events`, by account) or
// here. In the caller's transaction (the outcome's).
export async function pauseChannels(
  db: Database,
  items: ReadonlyArray<{ accountId: string } & NewPause>,
  options: { now: Date; events?: Map<string, NewEventOf[]> },
  transaction: Transaction,
): Promise<PauseRow[]> {
  const unique = new Map<string, { accountId: string } & NewPause>();
  for (const item of items) {
    const key = `${item.accountId} ${item.channel} ${scopeOf(item.step)}`;
    if (!unique.has(key)) unique.set(key, item);
  }
  if (unique.size === 0) return [];
  const list = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const ids = new Map(list.map(([key]) => [key, newRowId()]));
  // A template pause has nothing to probe (only a send tells): it waits for its step.
  const firstProbe = new Date(options.now.getTime() + retryDelayMs(1, () => 0.5));
  await insertIgnoringConflicts(
    db,
    'channel_pauses',
    ['id', 'account_id', 'channel', 'scope', 'sequence_id', 'step_id', 'code', 'reason', 'paused_at', 'probe_at', 'probe_attempt'],
    list.map(([key, item]) => [
      ids.get(key), item.accountId, item.channel, scopeOf(item.step), item.step?.sequenceId ?? null, item.step?.stepId ?? null,
      item.code.slice(0, 64), item.reason.slice(0, 500), options.now, item.step ? null : firstProbe, 0,
    ]),
    transaction,
  );
  const stored = await select<PauseRow>(
    db,
    `SELECT ${COLUMNS} FROM channel_pauses WHERE id IN (?)`,
    [[...ids.values()]],
    transaction,
  );
  for (const row of stored) {
    const event: NewEventOf = {
      type: 'channel.paused',
      data: { channel: row.channel, code: row.code, reason: row.reason, sequenceId: row.sequence_id, stepId: row.step_id },
    };
    if (options.events) options.events.set(row.account_id, [...(options.events.get(row.account_id) ?? []), event]);
    else await recordEvents(db, row.account_id, [event], transaction);
  }
  return stored;
}

// Resumes an account's pauses of a channel (all of them, or those of one sequence's steps):
// deletes them and records channel.resumed for each. Answers how many.
export async function resumeChannelPauses(
  db: Database,
  input: { accountId: string; channel: MessageChannel; sequenceId?: string; by: 'settings' | 'step' | 'probe'; onlyId?: string },
  transaction: Transaction,
): Promise<PauseRow[]> {
  const where = ['account_id = ?', 'channel = ?'];
  const values: unknown[] = [input.accountId, input.channel];
  if (input.sequenceId !== undefined) {
    where.push('sequence_id = ?');
    values.push(input.sequenceId);
  }
  if (input.onlyId !== undefined) {
    where.push('id = ?');
    values.push(input.onlyId);
  }
  const rows = await select<PauseRow>(db, `SELECT ${COLUMNS} FROM channel_pauses WHERE ${where.join(' AND ')}${forUpdate(db)}`, values, transaction);
  if (rows.length === 0) return [];
  await execute(db, 'DELETE FROM channel_pauses WHERE id IN (?)', [rows.map((row) => row.id)], transaction);
  await recordEvents(
    db,
    input.accountId,
    rows.map((row) => ({ type: 'channel.resumed', data: { channel: row.channel, by: input.by, sequenceId: row.sequence_id, stepId: row.step_id } }) as NewEventOf),
    transaction,
  );
  return rows;
}

// An account's pauses, oldest first: GET /channels/pauses and the dashboard's banners.
export async function listChannelPauses(db: Database, accountId: string, filter: { sequenceId?: string; channel?: MessageChannel } = {}): Promise<ChannelPauseDto[]> {
  const where = ['account_id = ?'];
  const values: unknown[] = [accountId];
  if (filter.sequenceId) {
    where.push("(scope = '' OR sequence_id = ?)");
    values.push(filter.sequenceId);
  }
  if (filter.channel) {
    where.push('channel = ?');
    values.push(filter.channel);
  }
  const rows = await select<PauseRow>(db, `SELECT ${COLUMNS} FROM channel_pauses WHERE ${where.join(' AND ')} ORDER BY paused_at, id`, values);
  return rows.map(toChannelPauseDto);
}

// Which of these (account, channel, sequence, step) are paused, in one statement: the keys
// `account channel sequence step` of those whose channel or template is.
export async function pausedSteps(
  db: Database,
  items: ReadonlyArray<{ accountId: string; channel: string; sequenceId: string; stepId: string }>,
  transaction?: Transaction,
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const rows = await select<{ account_id: string; channel: string; scope: string }>(
    db,
    'SELECT account_id, channel, scope FROM channel_pauses WHERE account_id IN (?)',
    [[...new Set(items.map((item) => item.accountId))]],
    transaction,
  );
  const paused = new Set(rows.map((row) => `${row.account_id} ${row.channel} ${row.scope}`));
  return new Set(
    items
      .filter((item) => paused.has(`${item.accountId} ${item.channel} `) || paused.has(`${item.accountId} ${item.channel} ${item.sequenceId}/${item.stepId}`))
      .map(pausedStepKey),
  );
}

export const pausedStepKey = (item: { accountId: string; channel: string; sequenceId: string; stepId: string }) =>
  `${item.accountId} ${item.channel} ${item.sequenceId} ${item.stepId}`;

// The (account, channel) pairs paused as a whole: the dispatcher leaves their groups out of
// its look (one small statement with the groups' read).
export async function pausedChannels(db: Database): Promise<Set<string>> {
  const rows = await select<{ account_id: string; channel: string }>(db, "SELECT account_id, channel FROM channel_pauses WHERE scope = ''", []);
  return new Set(rows.map((row) => `${row.account_id} ${row.channel}`));
}

// Takes the probes due now, each for this caller alone (a conditional UPDATE moves its probe_at
// to the next time on the retry schedule first: another process that read it too finds it
// moved), and answers when the next one is due (null: none). One read, one UPDATE per probe.
export async function takeDueProbes(db: Database, now: Date, limit = 20): Promise<{ taken: PauseRow[]; nextAt: Date | null }> {
  const rows = await select<PauseRow>(db, `SELECT ${COLUMNS} FROM channel_pauses WHERE probe_at IS NOT NULL ORDER BY probe_at LIMIT ${limit + 1}`, []);
  const taken: PauseRow[] = [];
  let nextAt: Date | null = null;
  for (const row of rows) {
    const at = toDate(row.probe_at);
    if (at.getTime() > now.getTime() || taken.length >= limit) {
      nextAt ??= at;
      continue;
    }
    const attempt = Number(row.probe_attempt) + 1;
    const next = new Date(now.getTime() + retryDelayMs(attempt + 1, () => 0.5));
    const changed = await execute(db, 'UPDATE channel_pauses SET probe_at = ?, probe_attempt = ? WHERE id = ? AND probe_attempt = ?', [next, attempt, row.id, Number(row.probe_attempt)]);
    if (changed > 0) taken.push(row);
    if (nextAt === null || next < nextAt) nextAt = next;
  }
  return { taken, nextAt };
}
