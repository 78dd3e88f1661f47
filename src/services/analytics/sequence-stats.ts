import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { catchUpProjection } from '../events/projection/catch-up';
import { normalizeId } from '../ids';
import { conversionFigures, type ConversionStats, type VariantStats, type WaitStats } from './conversion-stats';
import { utcDay, type DayMetric } from './progress-counters';

// GET /sequences/{id}/stats and the dashboard's analytics panel (docs/analytics.md): a
// sequence's figures over its last `days` UTC days (today included), read from the counters
// (progress-counters.ts) in three range reads on their primary keys: per step and outcome, per
// day and metric, runs waiting per step now. What they read grows with the steps, the days and
// the shards, never with the runs. Conversions, split variants and wait_for outcomes are read
// from the runs and executions apart (conversion-stats.ts): they find only the rows they count.

export interface StepStats {
  stepId: string;
  type: string;
  reached: number;
  completed: number;
  skipped: Record<string, number>;
  failed: number;
  // The step's messages (not runs) that bounced, or drew a complaint, in the window.
  bounced: number;
  complained: number;
  waiting: number;
}

export interface DayStats {
  date: string;
  enrollments: number;
  completions: number;
  exits: Record<string, number>;
  messages: { sent: number; delivered: number; read: number; failed: number; bounced: number; complained: number };
}

export interface SequenceStats {
  from: string;
  to: string;
  steps: StepStats[];
  days: DayStats[];
  conversions: ConversionStats;
  variants: VariantStats[];
  waits: WaitStats[];
  // Every change committed before this time is counted (the counters are projected from the
  // run log: projection/catch-up.ts).
  asOf: string;
}

const DAY_MS = 86_400_000;

export async function sequenceStats(db: Database, input: { accountId: string; sequenceId: string; days: number; now?: Date }): Promise<SequenceStats> {
  const id = normalizeId(input.sequenceId);
  const [sequence] = id ? await select<{ id: string; version: number | string | null }>(db, 'SELECT id, version FROM sequences WHERE id = ? AND account_id = ?', [id, input.accountId]) : [];
  if (!sequence) throw new NotFoundError('Sequence');
  const { asOf } = await catchUpProjection(db);
  const now = input.now ?? new Date();
  const to = utcDay(now);
  const from = utcDay(new Date(now.getTime() - (input.days - 1) * DAY_MS));

  const [stepRows, dayRows, waitingRows, versions] = [
    await select<{ step_id: string; outcome: string; reason: string; runs: number | string }>(
      db,
      'SELECT step_id, outcome, reason, SUM(runs) AS runs FROM sequence_step_days WHERE sequence_id = ? AND day >= ? AND day <= ? GROUP BY step_id, outcome, reason',
      [sequence.id, from, to],
    ),
    await select<{ day: string; metric: DayMetric; reason: string; n: number | string }>(
      db,
      'SELECT day, metric, reason, SUM(n) AS n FROM sequence_days WHERE sequence_id = ? AND day >= ? AND day <= ? GROUP BY day, metric, reason',
      [sequence.id, from, to],
    ),
    await select<{ step_id: string; runs: number | string }>(
      db,
      'SELECT step_id, SUM(runs) AS runs FROM sequence_step_waiting WHERE sequence_id = ? GROUP BY step_id',
      [sequence.id],
    ),
    // Newest first: a step's type is the one its latest version gives it.
    await select<{ version: number | string; steps: unknown }>(db, 'SELECT version, steps FROM sequence_versions WHERE sequence_id = ? ORDER BY version DESC', [sequence.id]),
  ];

  const current = versions.find((row) => Number(row.version) === Number(sequence.version));
  const typeOf = new Map<string, string>();
  for (const row of [...versions].reverse()) for (const step of stepsOf(row.steps)) typeOf.set(step.id, step.type);
  const steps = new Map<string, StepStats>();
  const stepOf = (stepId: string) => {
    let stats = steps.get(stepId);
    if (!stats) steps.set(stepId, (stats = { stepId, type: typeOf.get(stepId) ?? 'unknown', reached: 0, completed: 0, skipped: {}, failed: 0, bounced: 0, complained: 0, waiting: 0 }));
    return stats;
  };
  // The current version's steps first, in their order (each, with or without figures); then
  // the steps of older versions that have figures in the window or runs waiting at them.
  for (const step of current ? stepsOf(current.steps) : []) stepOf(step.id);
  for (const row of stepRows) {
    const runs = Number(row.runs);
    if (runs === 0) continue;
    const stats = stepOf(row.step_id);
    if (row.outcome === 'skipped') stats.skipped[row.reason] = (stats.skipped[row.reason] ?? 0) + runs;
    else if (row.outcome === 'reached' || row.outcome === 'completed' || row.outcome === 'failed' || row.outcome === 'bounced' || row.outcome === 'complained') {
      stats[row.outcome] += runs;
    }
  }
  for (const row of waitingRows) if (Number(row.runs) !== 0) stepOf(row.step_id).waiting = Number(row.runs);

  const days = new Map<string, DayStats>();
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) {
    const date = utcDay(new Date(t));
    days.set(date, { date, enrollments: 0, completions: 0, exits: {}, messages: { sent: 0, delivered: 0, read: 0, failed: 0, bounced: 0, complained: 0 } });
  }
  for (const row of dayRows) {
    const day = days.get(String(row.day));
    const n = Number(row.n);
    if (!day || n === 0) continue;
    if (row.metric === 'enrollments' || row.metric === 'completions') day[row.metric] += n;
    else if (row.metric === 'exits') day.exits[row.reason] = (day.exits[row.reason] ?? 0) + n;
    else day.messages[row.metric] += n;
  }
  const figures = await conversionFigures(db, {
    accountId: input.accountId,
    sequenceId: sequence.id,
    start: new Date(`${from}T00:00:00Z`),
    end: new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS),
    stepIds: [...steps.keys()],
    current: current ? stepsOf(current.steps) : [],
    versions: versions.map((row) => stepsOf(row.steps)),
  });
  return { from, to, steps: [...steps.values()], days: [...days.values()], ...figures, asOf: asOf.toISOString() };
}

function stepsOf(value: unknown): Step[] {
  const steps = typeof value === 'string' ? parseJson<unknown>(value) : value;
  return Array.isArray(steps) ? (steps as Step[]) : [];
}

// The sequences list's figures for a page of sequences (the account's own; others' ids are
// left out): runs completed and messages sent over the last 7 UTC days, today included, in
// one statement.
export async function recentActivity(
  db: Database,
  input: { accountId: string; sequenceIds: readonly string[]; now?: Date },
): Promise<Array<{ sequenceId: string; runsCompleted: number; messagesSent: number }>> {
  const ids = [...new Set(input.sequenceIds.map((id) => normalizeId(id)).filter((id): id is string => id !== null))];
  if (ids.length === 0) return [];
  const owned = await select<{ id: string }>(db, 'SELECT id FROM sequences WHERE account_id = ? AND id IN (?)', [input.accountId, ids]);
  if (owned.length === 0) return [];
  await catchUpProjection(db);
  const now = input.now ?? new Date();
  const rows = await select<{ sequence_id: string; metric: string; n: number | string }>(
    db,
    "SELECT sequence_id, metric, SUM(n) AS n FROM sequence_days WHERE sequence_id IN (?) AND day >= ? AND day <= ? AND metric IN ('completions', 'sent') GROUP BY sequence_id, metric",
    [owned.map((row) => row.id), utcDay(new Date(now.getTime() - 6 * DAY_MS)), utcDay(now)],
  );
  const figures = new Map(owned.map((row) => [row.id, { sequenceId: row.id, runsCompleted: 0, messagesSent: 0 }]));
  for (const row of rows) {
    const entry = figures.get(row.sequence_id)!;
    if (row.metric === 'completions') entry.runsCompleted = Number(row.n);
    else entry.messagesSent = Number(row.n);
  }
  return ids.flatMap((id) => (figures.has(id) ? [figures.get(id)!] : []));
}
