import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { Step } from '../../schemas/sequence-definition';
import { activeRun } from './runs';

// How many runs a move took from each older version, oldest version first (those it took any from).
export interface MovedRuns {
  fromVersion: number;
  runs: number;
}

// PATCH /sequences/{id} with moveRuns: the active runs of older versions go to the current one.
// Each run's step maps through stepMap, or to the new step with the same id; a step that is in
// neither is a 400 naming it, and nothing moves. A run of an older version that had no steps
// (started while the sequence's steps were emptied) has no step to map: it goes to the first step,
// as a run started now would. A moved run starts its new step afresh (a wait starts again), on a
// new visit: the execution it was in the middle of (a wait that was waiting) is recorded as
// skipped. Its claim is dropped, so an engine in the middle of the old step cannot record it
// (src/services/engine/run-queue.ts). Set-based: two statements per distinct (version, step) the
// runs are at, whatever their number.
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
  const positions = await select<{ version: number | string; current_step_id: string | null }>(
    db,
    `SELECT DISTINCT version, current_step_id FROM sequence_runs
     WHERE sequence_id = ? AND version IS NOT NULL AND version <> ? AND ${activeRun(db)}`,
    [input.sequenceId, input.version],
    transaction,
  );
  const targets = positions.map(({ version, current_step_id: from }) => ({
    version: Number(version),
    from,
    to:
      from === null
        ? (input.steps[0]?.id ?? null)
        : // Own keys only: a step called "constructor" is not the map's prototype's.
          Object.hasOwn(input.stepMap, from)
          ? input.stepMap[from]!
          : newIds.has(from) ? from : null,
  }));
  const unplaced = targets.filter((target) => target.to === null);
  if (unplaced.length > 0) {
    const details = unplaced.map((target) => ({
      path: 'moveRuns.stepMap',
      message: `Runs are at step "${target.from}" of version ${target.version}, which the map does not place and version ${input.version} does not have`,
    }));
    throw new ValidationError(details[0]!.message, details);
  }
  const now = new Date();
  const moved = new Map<number, number>();
  for (const target of targets.sort((a, b) => a.version - b.version)) {
    const where = `sequence_id = ? AND version = ? AND current_step_id ${target.from === null ? 'IS NULL' : '= ?'} AND ${activeRun(db)}`;
    const values = target.from === null ? [input.sequenceId, target.version] : [input.sequenceId, target.version, target.from];
    // A run at no step has no execution under way.
    if (target.from !== null) {
      await execute(
        db,
        `UPDATE run_step_executions SET status = 'skipped', reason = ?, finished_at = ?
         WHERE status = 'running' AND run_id IN (SELECT id FROM sequence_runs WHERE ${where})`,
        [`moved to version ${input.version}`, now, ...values],
        transaction,
      );
    }
    const runs = await execute(
      db,
      `UPDATE sequence_runs SET version = ?, current_step_id = ?, visit = visit + 1, attempt = 0, step_started_at = NULL,
         claim_token = NULL,
         due_at = CASE WHEN status = 'paused' THEN NULL ELSE ? END,
         paused_due_at = CASE WHEN status = 'paused' THEN ? ELSE NULL END,
         updated_at = ?
       WHERE ${where}`,
      [input.version, target.to, now, now, now, ...values],
      transaction,
    );
    if (runs > 0) moved.set(target.version, (moved.get(target.version) ?? 0) + runs);
  }
  return [...moved].map(([fromVersion, runs]) => ({ fromVersion, runs }));
}
