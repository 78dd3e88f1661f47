import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import type { MessageRow } from '../messages/message-rows';
import { countMessageDays, countMessageSteps, type DayMetric } from './progress-counters';

// A sequence's messages by the day they were sent, delivered, read, failed, bounced or
// complained: each status counts once per message, when its time is first written (a provider
// that repeats a status, or reports it late, finds the time written and counts nothing). The day
// is the time written (the provider's, for its reports). A failure time written on a message
// that is `bounced` counts as bounced, not failed; `complained` has no time of its own and
// counts when the message first reaches it (it is the last status a message can reach), on the
// writer's day. Test sends and messages of no sequence are not counted.
const TIME_METRICS: ReadonlyArray<[keyof MessageRow, DayMetric]> = [
  ['sent_at', 'sent'],
  ['delivered_at', 'delivered'],
  ['read_at', 'read'],
  ['failed_at', 'failed'],
];

export function countMessageStatuses(db: Database, transaction: Transaction, before: readonly MessageRow[], after: readonly MessageRow[], now: Date = new Date()): void {
  const was = new Map(before.map((row) => [row.id, row]));
  const reached: Array<{ sequenceId: string; at: Date; metric: DayMetric }> = [];
  // Bounces and complaints by the step that sent the message, too (the step's figures).
  const byStep: Array<{ sequenceId: string; stepId: string; at: Date; outcome: 'bounced' | 'complained' }> = [];
  for (const row of after) {
    const old = was.get(row.id);
    if (!old || !row.sequence_id || isTrue(row.test)) continue;
    for (const [column, metric] of TIME_METRICS) {
      if (isSet(old[column]) || !isSet(row[column])) continue;
      const bounced = metric === 'failed' && row.status === 'bounced';
      reached.push({ sequenceId: row.sequence_id, at: toDate(row[column]), metric: bounced ? 'bounced' : metric });
      if (bounced && row.step_id) byStep.push({ sequenceId: row.sequence_id, stepId: row.step_id, at: toDate(row[column]), outcome: 'bounced' });
    }
    if (row.status === 'complained' && old.status !== 'complained') {
      reached.push({ sequenceId: row.sequence_id, at: now, metric: 'complained' });
      if (row.step_id) byStep.push({ sequenceId: row.sequence_id, stepId: row.step_id, at: now, outcome: 'complained' });
    }
  }
  if (reached.length > 0) countMessageDays(db, transaction, reached);
  if (byStep.length > 0) countMessageSteps(db, transaction, byStep);
}

const isSet = (value: unknown) => value !== null && value !== undefined;
const isTrue = (value: unknown) => value === true || value === 1 || value === '1' || value === 'true';
