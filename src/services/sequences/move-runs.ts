import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { LIVE_SEND } from '../runs/outbox';
import { cancelMessagesOfCancelledSends } from '../messages/message-store';
import { nextRunState, runChangeSql, type RunChange } from '../runs/run-state';
import type { RunStatus } from '../../schemas/statuses';
import { canonicalJson } from '../idempotency/canonical-json';
import { activeRun } from '../runs/runs';
import { countRunProgress } from '../analytics/progress-counters';
import { readVersions, versionKey } from '../runs/sequence-versions';

// How many runs a move took from each older version, oldest version first (those it took any from).
export interface MovedRuns {
  fromVersion: number;
  runs: number;
}

// PATCH /sequences/{id} with moveRuns: the active runs of older versions go to the current one.
// Each run's step maps through stepMap, or to the new step with the same id; a step that is in
// neither is a 400 naming it, and nothing moves. A run of an older version that had no steps
// (started while the sequence's steps were emptied) has no step to map: it goes to the first step,
// as a run started now would. What a moved run becomes is the state machine's
// (src/services/runs/run-state.ts): it starts its new step afresh (a wait starts again), on a
// new visit, and what it was in the middle of (a wait that was waiting) is recorded skipped; a
// send of the step it leaves that has not started is cancelled. Its claim is dropped, so an
// engine in the middle of the old step cannot record it. Two exceptions keep the run's visit:
// a run whose step has a send under way (queued, held or on the wire), moved to a step that
// sends the same (a webhook to the same endpoint with the same payload), keeps its send: the
// send goes on with its id and its attempts, and is not sent again; a run at a wait, moved to
// the same wait (the same duration, or the same time of day and weekdays), keeps its due time:
// a 1-day wait begun yesterday still ends today. A move keeps the run's status: the status
// counters (run-status-counts.ts) do not change.
//
// Each run is locked, by its primary key, before where it is is read: an engine recording the
// run's step commits first (and the move sees the step the run went to), or finds the move done
// and writes nothing (its claim is void). By primary key, as the engine locks runs: through a
// secondary index the move would hold index entries the engine's record must rewrite while it
// waits for the run the record holds, a deadlock. (The runs at older versions can only leave
// that set meanwhile, never join it: new runs start on the current version, and moves of one
// sequence take turns on its row.) Set-based per chunk of runs: a lock, a read of their sends,
// one UPDATE per distinct change, the executions and sends they leave behind.
const CHUNK = 1_000;

export async function moveRunsToVersion(
  db: Database,
  input: { sequenceId: string; version: number; steps: readonly Step[]; stepMap: Record<string, string> },
  transaction: Transaction,
): Promise<MovedRuns[]> {
  const newIds = new Set(input.steps.map((step) => step.id));
  for (const [from, to] of Object.entries(input.stepMap)) {
    if (!newIds.has(to)) {
      const path = `moveRuns.stepMap.${from}`;
      throw new ValidationError(`${path}: "${to}" is not a step of version ${input.version}`, [
        { path, message: `"${to}" is not a step of version ${input.version}` },
      ]);
    }
  }
  // Own keys only: a step called "constructor" is not the map's prototype's. A run at no step
  // goes to the first.
  const placeOf = (stepId: string | null) =>
    stepId === null ? (input.steps[0]?.id ?? null) : Object.hasOwn(input.stepMap, stepId) ? input.stepMap[stepId]! : newIds.has(stepId) ? stepId : null;
  const atOlder = `sequence_id = ? AND version IS NOT NULL AND version <> ? AND ${activeRun(db)}`;
  const candidates = await select<RunAt>(db, `SELECT id, version, current_step_id FROM sequence_runs WHERE ${atOlder}`, [input.sequenceId, input.version], transaction);
  refuseUnplaced(candidates, placeOf, input.version);
  if (candidates.length === 0) return [];
  const oldSteps = await readVersions(db, [...new Set(candidates.map((run) => Number(run.version)))].map((version) => ({ sequenceId: input.sequenceId, version })), transaction);
  const now = new Date();
  const moved = new Map<number, number>();
  for (let start = 0; start < candidates.length; start += CHUNK) {
    const ids = candidates.slice(start, start + CHUNK).map((run) => run.id);
    const runs = await select<RunAt & { status: RunStatus; visit: number | string }>(
      db,
      `SELECT id, version, current_step_id, status, visit FROM sequence_runs WHERE id IN (?) AND ${atOlder}${forUpdate(db)}`,
      [ids, input.sequenceId, input.version],
      transaction,
    );
    // Where they are now, under the lock: a run that went on to a step no map places is a 400.
    refuseUnplaced(runs, placeOf, input.version);
    if (runs.length === 0) continue;
    const sending = new Set(
      (
        await select<{ run_id: string; run_visit: number | string }>(
          db,
          `SELECT run_id, run_visit FROM outbox WHERE run_id IN (?) AND status IN ${LIVE_SEND}`,
          [runs.map((run) => run.id)],
          transaction,
        )
      ).map((row) => `${row.run_id}/${Number(row.run_visit)}`),
    );
    const changes = new Map<string, { change: RunChange; ids: string[]; from: number[] }>();
    const left: string[] = [];
    for (const run of runs) {
      const to = placeOf(run.current_step_id)!;
      const before = oldSteps.get(versionKey(input.sequenceId, Number(run.version)))?.find((step) => step.id === run.current_step_id);
      const after = input.steps.find((step) => step.id === to);
      const keep = sending.has(`${run.id}/${Number(run.visit)}`) && sameSend(before, after) ? 'send' : sameWait(before, after) ? 'wait' : null;
      const change = nextRunState({ status: run.status }, { kind: 'move', version: input.version, stepId: to, keep }, now);
      if (!keep) left.push(run.id);
      const key = JSON.stringify([change.set, change.keepClaim]);
      const group = changes.get(key);
      if (group) {
        group.ids.push(run.id);
        group.from.push(Number(run.version));
      } else changes.set(key, { change, ids: [run.id], from: [Number(run.version)] });
    }
    for (const { change, ids: changed, from } of changes.values()) {
      const { set, values } = runChangeSql(change, now);
      await execute(db, `UPDATE sequence_runs SET ${set} WHERE id IN (?)`, [...values, changed], transaction);
      // Every run locked and read here is written: each counts for the version it left.
      for (const version of from) moved.set(version, (moved.get(version) ?? 0) + 1);
    }
    countRunProgress(db, transaction, now, runs.map((run) => ({ sequenceId: input.sequenceId, from: run.current_step_id, to: placeOf(run.current_step_id) })));
    if (left.length === 0) continue;
    // What they left behind at their old visit: an execution under way is skipped, a send not
    // started is cancelled (one on the wire finishes, and is recorded as skipped).
    await execute(
      db,
      `UPDATE run_step_executions SET status = 'skipped', reason = ?, finished_at = ?
       WHERE run_id IN (?) AND status = 'running' AND visit < (SELECT r.visit FROM sequence_runs r WHERE r.id = run_step_executions.run_id)`,
      [`moved to version ${input.version}`, now, left],
      transaction,
    );
    await execute(
      db,
      `UPDATE outbox SET status = 'cancelled', due_at = NULL, updated_at = ?
       WHERE run_id IN (?) AND status IN ('queued', 'held') AND run_visit < (SELECT r.visit FROM sequence_runs r WHERE r.id = outbox.run_id)`,
      [now, left],
      transaction,
    );
    await cancelMessagesOfCancelledSends(db, left, `moved to version ${input.version} before it was sent`, now, transaction);
  }
  return [...moved].sort(([a], [b]) => a - b).map(([fromVersion, runs]) => ({ fromVersion, runs }));
}

interface RunAt {
  id: string;
  version: number | string;
  current_step_id: string | null;
}

function refuseUnplaced(runs: readonly RunAt[], placeOf: (stepId: string | null) => string | null, version: number): void {
  const unplaced = new Map<string, { version: number; from: string | null }>();
  for (const run of runs) {
    if (placeOf(run.current_step_id) === null) unplaced.set(`${run.version}/${run.current_step_id}`, { version: Number(run.version), from: run.current_step_id });
  }
  if (unplaced.size === 0) return;
  const details = [...unplaced.values()].map((target) => ({
    path: 'moveRuns.stepMap',
    message: `Runs are at step "${target.from}" of version ${target.version}, which the map does not place and version ${version} does not have`,
  }));
  throw new ValidationError(details[0]!.message, details);
}

// Two waits that end at the same moment for a run that began either: a wait under way goes on.
function sameWait(before: Step | undefined, after: Step | undefined): boolean {
  if (before?.type !== 'wait' || after?.type !== 'wait') return false;
  return canonicalJson({ ...before, id: null }) === canonicalJson({ ...after, id: null });
}

// Two steps that send the same thing to the same place: a send begun for one is the other's.
function sameSend(before: Step | undefined, after: Step | undefined): boolean {
  if (before?.type !== 'webhook' || after?.type !== 'webhook') return false;
  return before.endpointId.toLowerCase() === after.endpointId.toLowerCase() && canonicalJson(before.payload ?? null) === canonicalJson(after.payload ?? null);
}
