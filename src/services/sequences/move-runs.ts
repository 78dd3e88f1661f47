import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { LIVE_SEND } from '../engine/outbound/outbox';
import { nextRunState, runChangeSql } from '../engine/run-state';
import { canonicalJson } from '../idempotency/canonical-json';
import { activeRun } from './runs';
import { readVersions, versionKey } from './sequence-versions';

// PATCH /sequences/{id} with moveRuns: the active runs of older versions go to the current one.
// Each run's step maps through stepMap, or to the new step with the same id; a step that is in
// neither is a 400 naming it, and nothing moves. What a moved run becomes is the state
// machine's (src/services/engine/run-state.ts): it starts its new step afresh (a wait starts
// again), on a new visit, and what it was in the middle of (a wait that was waiting) is recorded
// skipped; a send of the step it leaves that has not started is cancelled. Its claim is
// dropped, so an engine in the middle of the old step cannot record it. One exception: a run
// whose step has a send under way (queued, held or on the wire), moved to a step that sends
// the same (a webhook to the same endpoint with the same payload), keeps its visit and its send:
// the send goes on with its id and its attempts, and is not sent again.
//
// The runs are locked before anything about them is read: an engine recording a run's step
// commits first (and the move sees where the run went) or finds the move done and writes
// nothing (its claim is void). Set-based: a few statements per distinct (version, step) the
// runs are at, whatever their number.
export async function moveRunsToVersion(
  db: Database,
  input: { sequenceId: string; version: number; steps: readonly Step[]; stepMap: Record<string, string> },
  transaction: Transaction,
): Promise<number> {
  const newIds = new Set(input.steps.map((step) => step.id));
  for (const [from, to] of Object.entries(input.stepMap)) {
    if (!newIds.has(to)) {
      const path = `moveRuns.stepMap.${from}`;
      throw new ValidationError(`${path}: "${to}" is not a step of version ${input.version}`, [
        { path, message: `"${to}" is not a step of version ${input.version}` },
      ]);
    }
  }
  const positions = await select<{ version: number | string; current_step_id: string }>(
    db,
    `SELECT DISTINCT version, current_step_id FROM sequence_runs
     WHERE sequence_id = ? AND version IS NOT NULL AND version <> ? AND current_step_id IS NOT NULL AND ${activeRun(db)}${forUpdate(db)}`,
    [input.sequenceId, input.version],
    transaction,
  );
  const targets = positions.map((position) => ({
    version: Number(position.version),
    from: position.current_step_id,
    // Own keys only: a step called "constructor" is not the map's prototype's.
    to: Object.hasOwn(input.stepMap, position.current_step_id)
      ? input.stepMap[position.current_step_id]!
      : newIds.has(position.current_step_id) ? position.current_step_id : null,
  }));
  const unplaced = targets.filter((target) => target.to === null);
  if (unplaced.length > 0) {
    const details = unplaced.map((target) => ({
      path: 'moveRuns.stepMap',
      message: `Runs are at step "${target.from}" of version ${target.version}, which the map does not place and version ${input.version} does not have`,
    }));
    throw new ValidationError(details[0]!.message, details);
  }
  if (targets.length === 0) return 0;
  const oldSteps = await readVersions(db, [...new Set(targets.map((target) => target.version))].map((version) => ({ sequenceId: input.sequenceId, version })), transaction);
  const now = new Date();
  let moved = 0;
  for (const target of targets) {
    const where = `sequence_id = ? AND version = ? AND current_step_id = ? AND ${activeRun(db)}`;
    const at = [input.sequenceId, target.version, target.from];
    const before = oldSteps.get(versionKey(input.sequenceId, target.version))?.find((step) => step.id === target.from);
    const after = input.steps.find((step) => step.id === target.to);
    // The change depends on whether the run is paused (it starts its step when resumed): one
    // statement for each, with the machine's answer for each.
    for (const paused of [true, false]) {
      const which = ` AND status ${paused ? '=' : '<>'} 'paused'`;
      const status = paused ? 'paused' : 'running';
      if (sameSend(before, after)) {
        const kept = runChangeSql(nextRunState({ status }, { kind: 'move', version: input.version, stepId: target.to!, keepSend: true }, now), now);
        moved += await execute(
          db,
          `UPDATE sequence_runs SET ${kept.set} WHERE ${where}${which}
             AND EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = sequence_runs.id AND o.run_visit = sequence_runs.visit AND o.status IN ${LIVE_SEND})`,
          [...kept.values, ...at],
          transaction,
        );
      }
      const fresh = runChangeSql(nextRunState({ status }, { kind: 'move', version: input.version, stepId: target.to!, keepSend: false }, now), now);
      moved += await execute(db, `UPDATE sequence_runs SET ${fresh.set} WHERE ${where}${which}`, [...fresh.values, ...at], transaction);
    }
  }
  // What the moved runs left behind at their old visit: an execution under way is skipped, a
  // send not started is cancelled (one on the wire finishes, and is recorded as skipped).
  const moves = `run_id IN (SELECT id FROM sequence_runs WHERE sequence_id = ? AND version = ? AND ${activeRun(db)})`;
  await execute(
    db,
    `UPDATE run_step_executions SET status = 'skipped', reason = ?, finished_at = ?
     WHERE status = 'running' AND ${moves} AND visit < (SELECT r.visit FROM sequence_runs r WHERE r.id = run_step_executions.run_id)`,
    [`moved to version ${input.version}`, now, input.sequenceId, input.version],
    transaction,
  );
  await execute(
    db,
    `UPDATE outbox SET status = 'cancelled', due_at = NULL, updated_at = ?
     WHERE status IN ('queued', 'held') AND ${moves} AND run_visit < (SELECT r.visit FROM sequence_runs r WHERE r.id = outbox.run_id)`,
    [now, input.sequenceId, input.version],
    transaction,
  );
  return moved;
}

// Two steps that send the same thing to the same place: a send begun for one is the other's.
function sameSend(before: Step | undefined, after: Step | undefined): boolean {
  if (before?.type !== 'webhook' || after?.type !== 'webhook') return false;
  return before.endpointId.toLowerCase() === after.endpointId.toLowerCase() && canonicalJson(before.payload ?? null) === canonicalJson(after.payload ?? null);
}
