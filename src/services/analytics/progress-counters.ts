import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { addToCounters } from '../../db/sql/counter-rows';
import { onBeforeCommit } from '../../db/sql/transaction';
import { reasonKey } from './reasons';

// The analytics counters (db/migrations/20261223000000-create-sequence-stats.js,
// docs/analytics.md): what runs did at each step and each day, and where they wait now, kept
// as runs move and messages change, never counted over runs, executions or messages.
//
// Every writer that moves runs reports each run's move here, in its own transaction, from what
// it read under the run's lock (as it reports status moves to run-status/run-status-counts.ts):
// - startRuns (sequences/runs.ts): enrolled, at the first step;
// - the engine's record (engine/record-batch.ts, through engine-progress.ts) and the outbound
//   outcomes (engine/outbound/record-outcomes.ts): a step completed or failed, the next step
//   reached, the run ended;
// - endRuns (exit-rules/end-runs.ts: exit rules, unenroll), changeRunStatus
//   (sequences/run-transitions.ts: runs.transition's ends), moveRuns (sequences/move-runs.ts),
//   a contact's deletion (run-status-counts.ts countRunsDeletedWithContact);
// and the messages' status writer (messages/message-store.ts applyStatusChanges) reports the
// rows before and after (message-progress.ts).
//
// The moves are summed per transaction and written once, just before it commits (one upsert
// per table, the rows in key order, so that two writers take their locks in one order). The
// waiting counter is written to one of WAITING_SHARDS shards chosen at random per transaction
// (SQLite, one writer: shard 0), since every move of a sequence's runs meets there; the daily
// rows are not sharded (the migration says why): a reader reads one row per figure and day.

export const WAITING_SHARDS = 8;

// bounced, complained: a step's messages (not runs) that reached those statuses, at once or
// reported later (message-progress.ts).
export type StepOutcome = 'reached' | 'completed' | 'skipped' | 'failed' | 'bounced' | 'complained';
export type DayMetric = 'enrollments' | 'completions' | 'exits' | 'sent' | 'delivered' | 'read' | 'failed' | 'bounced' | 'complained';
export type EndStatus = 'completed' | 'cancelled' | 'failed';

export interface RunProgress {
  sequenceId: string;
  // The step the run was active at before the move (null: a new run, or one at no step).
  from: string | null;
  // The step it is active at after (null: it ended, was deleted, or is at no step).
  to: string | null;
  // How it left `from`, when a step's own outcome says (a step that succeeded, failed, or was
  // skipped by its send: an unsubscribed contact). Absent: a run that ended from outside
  // (`ended`) skipped its step, or failed at it when it ended failed; a move says nothing.
  left?: { outcome: 'completed' | 'failed' | 'skipped'; reason?: string | null };
  enrolled?: boolean;
  ended?: { status: EndStatus; reason: string | null };
}

interface Deltas {
  steps: Map<string, { key: [string, string, string, string, string]; delta: number }>;
  days: Map<string, { key: [string, string, string, string]; delta: number }>;
  waiting: Map<string, { key: [string, string]; delta: number }>;
}

const pending = new WeakMap<Transaction, Deltas>();

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

// Runs moved, at `at` (the writer's time: its UTC day is the day counted).
export function countRunProgress(db: Database, transaction: Transaction, at: Date, moves: Iterable<RunProgress>): void {
  const day = utcDay(at);
  const deltas = deltasOf(db, transaction);
  for (const move of moves) {
    const { sequenceId, from, to } = move;
    if (from !== to) {
      if (from !== null) add(deltas.waiting, [sequenceId, from], -1);
      if (to !== null) add(deltas.waiting, [sequenceId, to], 1);
    }
    if (move.enrolled) addDay(deltas, sequenceId, day, 'enrollments', '', 1);
    if (from !== null) {
      const left = leftStep(move);
      if (left) add(deltas.steps, [sequenceId, day, from, left.outcome, left.reason], 1);
    }
    // Arrived at a step: a new one, or the same one again after completing it (a branch back).
    if (to !== null && (to !== from || move.left !== undefined)) add(deltas.steps, [sequenceId, day, to, 'reached', ''], 1);
    if (move.ended) {
      if (move.ended.status === 'completed') addDay(deltas, sequenceId, day, 'completions', '', 1);
      else addDay(deltas, sequenceId, day, 'exits', reasonKey(move.ended.status, move.ended.reason), 1);
    }
  }
}

// Messages of a sequence that reached a status (each once per message: the writer reports a
// status only when its time is first written).
export function countMessageDays(db: Database, transaction: Transaction, reached: Iterable<{ sequenceId: string; at: Date; metric: DayMetric }>): void {
  const deltas = deltasOf(db, transaction);
  for (const { sequenceId, at, metric } of reached) addDay(deltas, sequenceId, utcDay(at), metric, '', 1);
}

// A step's messages that bounced or drew a complaint (each once per message), on the day of it.
export function countMessageSteps(
  db: Database,
  transaction: Transaction,
  reached: Iterable<{ sequenceId: string; stepId: string; at: Date; outcome: 'bounced' | 'complained' }>,
): void {
  const deltas = deltasOf(db, transaction);
  for (const { sequenceId, stepId, at, outcome } of reached) add(deltas.steps, [sequenceId, utcDay(at), stepId, outcome, ''], 1);
}

// How a run left the step it was at: its step's outcome, else its end's (a skip, by the end's
// reason; a failure when it ended failed).
function leftStep(move: RunProgress): { outcome: 'completed' | 'failed' | 'skipped'; reason: string } | undefined {
  if (move.left) return { outcome: move.left.outcome, reason: move.left.outcome === 'skipped' ? reasonKey('cancelled', move.left.reason) : '' };
  if (!move.ended) return undefined;
  if (move.ended.status === 'failed') return { outcome: 'failed', reason: '' };
  return { outcome: 'skipped', reason: reasonKey(move.ended.status, move.ended.reason) };
}

function addDay(deltas: Deltas, sequenceId: string, day: string, metric: DayMetric, reason: string, delta: number): void {
  add(deltas.days, [sequenceId, day, metric, reason], delta);
}

function add<K extends string[]>(map: Map<string, { key: K; delta: number }>, key: K, delta: number): void {
  const id = key.join('\n');
  const entry = map.get(id);
  if (entry) entry.delta += delta;
  else map.set(id, { key, delta });
}

function deltasOf(db: Database, transaction: Transaction): Deltas {
  let deltas = pending.get(transaction);
  if (deltas) return deltas;
  deltas = { steps: new Map(), days: new Map(), waiting: new Map() };
  pending.set(transaction, deltas);
  const written = deltas;
  // Put off once more when its turn comes, so that it is written after every other piece of
  // work the transaction leaves to its end (the run status counters among them), whichever
  // was counted first: the one order of locks (docs/architecture.md).
  onBeforeCommit(transaction, async () => onBeforeCommit(transaction, () => writeDeltas(db, transaction, written)));
  return deltas;
}

// Tables in one order, each table's rows in key order (counter-rows.ts).
async function writeDeltas(db: Database, transaction: Transaction, deltas: Deltas): Promise<void> {
  const shard = db.dialect === 'sqlite' ? 0 : Math.floor(Math.random() * WAITING_SHARDS);
  const rows = <K extends string[]>(map: Map<string, { key: K; delta: number }>, ...extra: number[]) =>
    [...map.values()].map(({ key, delta }) => ({ key: [...key, ...extra], delta }));
  await addToCounters(db, transaction, 'sequence_step_days', ['sequence_id', 'day', 'step_id', 'outcome', 'reason'], 'runs', rows(deltas.steps));
  await addToCounters(db, transaction, 'sequence_days', ['sequence_id', 'day', 'metric', 'reason'], 'n', rows(deltas.days));
  await addToCounters(db, transaction, 'sequence_step_waiting', ['sequence_id', 'step_id', 'shard'], 'runs', rows(deltas.waiting, shard));
}
