import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, forUpdate, select, upsertRows } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { afterPosition, readThrough } from '../lists/keyset';

// Run history that stops growing (docs/operations.md "Run history"): the step executions of runs
// that ended before `before` are deleted, and so are their finished sends (the outbox rows their
// webhook steps wrote, runs/outbox.ts); the runs stay, with their final status, reason
// and step. Ended runs are walked in the order they ended (sequence_runs_completed, completed_at
// then id) from where the walk stopped last (maintenance_cursors), a chunk per transaction:
// at most runsPerChunk runs, and at most rowsPerChunk executions, then sends, per statement (a run
// that looped through thousands of steps is finished over several chunks). Only finished sends
// go: one a dispatcher still holds (`sending`) is left for it to record. The cursor moves in the
// chunk's own transaction, so a crash resumes at the chunk it was doing, and two processes
// take turns on the cursor's row instead of deleting the same rows twice.
//
// The walk never looks back: a run that ends gets completed_at = now, far after the cursor,
// which never passes `before` (RUN_HISTORY_DAYS ago).

export interface RunHistoryPruneOptions {
  before: Date;
  runsPerChunk: number;
  rowsPerChunk: number;
  // Per call: a backlog beyond maxChunks is left for the next call.
  maxChunks: number;
  shouldStop?: () => boolean;
}

const CURSOR = 'run_history';
const ENDED = "('completed', 'cancelled', 'failed')";
const FINISHED_SENDS = "('succeeded', 'failed', 'cancelled')";

// Answers what it deleted, and whether ended runs older than `before` are left to walk.
export async function pruneRunHistory(db: Database, options: RunHistoryPruneOptions): Promise<{ runs: number; executions: number; sends: number; more: boolean }> {
  // The cursor's row, made once (at the start of time).
  await withTransaction(db, (transaction) =>
    upsertRows(db, 'maintenance_cursors', ['name', 'position_at', 'position_id', 'updated_at'], [[CURSOR, new Date(0), '', new Date()]], ['name'], ['name'], transaction),
  );
  const total = { runs: 0, executions: 0, sends: 0, more: true };
  for (let chunk = 0; chunk < options.maxChunks; chunk += 1) {
    if (options.shouldStop?.()) return total;
    const done = await withTransaction(db, async (transaction) => {
      const [cursor] = await select<{ position_at: unknown; position_id: string }>(
        db,
        `SELECT position_at, position_id FROM maintenance_cursors WHERE name = ?${forUpdate(db)}`,
        [CURSOR],
        transaction,
      );
      // Strictly after the last run done (the lists' keyset form: a batch of runs ends in one
      // instant, and the walk must not read them again).
      const after = afterPosition('completed_at', 'id', 'ASC', { at: toDate(cursor!.position_at).getTime(), id: cursor!.position_id });
      const runs = await select<{ id: string; completed_at: unknown }>(
        db,
        `SELECT id, completed_at FROM ${readThrough(db, 'sequence_runs', 'r', 'sequence_runs_completed')}
         WHERE completed_at < ?${after.sql} AND status IN ${ENDED}
         ORDER BY completed_at, id LIMIT ${Math.max(1, Math.floor(options.runsPerChunk))}`,
        [options.before, ...after.values],
        transaction,
      );
      if (runs.length === 0) return { runs: 0, executions: 0, sends: 0, finished: true };
      const ids = runs.map((run) => run.id);
      const limit = Math.max(1, Math.floor(options.rowsPerChunk));
      const executions = await execute(
        db,
        db.dialect === 'sqlite'
          ? `DELETE FROM run_step_executions WHERE id IN (SELECT id FROM run_step_executions WHERE run_id IN (?) LIMIT ${limit})`
          : `DELETE FROM run_step_executions WHERE run_id IN (?) LIMIT ${limit}`,
        [ids],
        transaction,
      );
      // A full statement may have left executions of these runs: the same chunk again.
      if (executions >= limit) return { runs: 0, executions, sends: 0, finished: false };
      const sends = await execute(
        db,
        db.dialect === 'sqlite'
          ? `DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE run_id IN (?) AND status IN ${FINISHED_SENDS} LIMIT ${limit})`
          : `DELETE FROM outbox WHERE run_id IN (?) AND status IN ${FINISHED_SENDS} LIMIT ${limit}`,
        [ids],
        transaction,
      );
      if (sends >= limit) return { runs: 0, executions, sends, finished: false };
      const last = runs[runs.length - 1]!;
      await execute(
        db,
        'UPDATE maintenance_cursors SET position_at = ?, position_id = ?, updated_at = ? WHERE name = ?',
        [toDate(last.completed_at), last.id, new Date(), CURSOR],
        transaction,
      );
      return { runs: runs.length, executions, sends, finished: runs.length < options.runsPerChunk };
    });
    total.runs += done.runs;
    total.executions += done.executions;
    total.sends += done.sends;
    if (done.finished) return { ...total, more: false };
  }
  return total;
}
