import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { addDelta, runLogOf, type RunLogEntry } from '../events/projection/run-log';
import { reasonKey } from './reasons';

// The analytics counters (db/migrations/20261223000000-create-sequence-stats.js,
// docs/analytics.md): what runs did at each step and each day, and where they wait now, kept
// as runs move and messages change, never counted over runs, executions or messages.
//
// Every writer that moves runs reports each run's move here, in its own transaction, from what
// it read under the run's lock (as it reports status moves to run-status/run-status-counts.ts):
// - startRuns (runs/runs.ts): enrolled, at the first step;
// - the engine's record (engine/record-batch.ts, through engine-progress.ts) and the outbound
//   outcomes (engine/outbound/record-outcomes.ts): a step completed or failed, the next step
//   reached, the run ended;
// - endRuns (exit-rules/end-runs.ts: exit rules, unenroll), changeRunStatus
//   (sequences/run-transitions.ts: runs.transition's ends), moveRuns (sequences/move-runs.ts),
//   a contact's deletion (run-status-counts.ts countRunsDeletedWithContact);
// and the messages' status writer (messages/message-store.ts applyStatusChanges) reports the
// rows before and after (message-progress.ts).
//
// The moves are summed per transaction into its run log row (projection/run-log.ts), and the
// projector adds them to the counters later, a batch of transactions at a time, exactly once
// (projection/projector.ts): the counters are as fresh as the projection, and a reader catches
// the projection up first (projection/catch-up.ts). The counter tables keep their shard column
// (older rows are in several shards; the projector, their one writer now, adds to shard 0), and
// readers sum the shards as before.

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

export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

// Runs moved, at `at` (the writer's time: its UTC day is the day counted).
export function countRunProgress(db: Database, transaction: Transaction, at: Date, moves: Iterable<RunProgress>): void {
  const day = utcDay(at);
  const deltas = runLogOf(db, transaction);
  for (const move of moves) {
    const { sequenceId, from, to } = move;
    if (from !== to) {
      if (from !== null) addDelta(deltas.waiting, [sequenceId, from], -1);
      if (to !== null) addDelta(deltas.waiting, [sequenceId, to], 1);
    }
    if (move.enrolled) addDay(deltas, sequenceId, day, 'enrollments', '', 1);
    if (from !== null) {
      const left = leftStep(move);
      if (left) addDelta(deltas.steps, [sequenceId, day, from, left.outcome, left.reason], 1);
    }
    // Arrived at a step: a new one, or the same one again after completing it (a branch back).
    if (to !== null && (to !== from || move.left !== undefined)) addDelta(deltas.steps, [sequenceId, day, to, 'reached', ''], 1);
    if (move.ended) {
      if (move.ended.status === 'completed') addDay(deltas, sequenceId, day, 'completions', '', 1);
      else addDay(deltas, sequenceId, day, 'exits', reasonKey(move.ended.status, move.ended.reason), 1);
    }
  }
}

// Messages of a sequence that reached a status (each once per message: the writer reports a
// status only when its time is first written).
export function countMessageDays(db: Database, transaction: Transaction, reached: Iterable<{ sequenceId: string; at: Date; metric: DayMetric }>): void {
  const deltas = runLogOf(db, transaction);
  for (const { sequenceId, at, metric } of reached) addDay(deltas, sequenceId, utcDay(at), metric, '', 1);
}

// A step's messages that bounced or drew a complaint (each once per message), on the day of it.
export function countMessageSteps(
  db: Database,
  transaction: Transaction,
  reached: Iterable<{ sequenceId: string; stepId: string; at: Date; outcome: 'bounced' | 'complained' }>,
): void {
  const deltas = runLogOf(db, transaction);
  for (const { sequenceId, stepId, at, outcome } of reached) addDelta(deltas.steps, [sequenceId, utcDay(at), stepId, outcome, ''], 1);
}

// How a run left the step it was at: its step's outcome, else its end's (a skip, by the end's
// reason; a failure when it ended failed).
function leftStep(move: RunProgress): { outcome: 'completed' | 'failed' | 'skipped'; reason: string } | undefined {
  if (move.left) return { outcome: move.left.outcome, reason: move.left.outcome === 'skipped' ? reasonKey('cancelled', move.left.reason) : '' };
  if (!move.ended) return undefined;
  if (move.ended.status === 'failed') return { outcome: 'failed', reason: '' };
  return { outcome: 'skipped', reason: reasonKey(move.ended.status, move.ended.reason) };
}

function addDay(deltas: RunLogEntry, sequenceId: string, day: string, metric: DayMetric, reason: string, delta: number): void {
  addDelta(deltas.days, [sequenceId, day, metric, reason], delta);
}
