import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, select, skipLocked } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { RunStatus } from '../../schemas/statuses';
import { nextRunState, runChangeSql } from '../runs/run-state';
import { afterPosition, readThrough } from '../lists/keyset';
import { RELEASE_PREDICATES, type ReleaseKind } from './park-runs';

// The releases recorded by park-runs.ts, carried out a chunk per transaction: the sequence's
// pending runs, then its running ones, walked along sequence_runs_sequence_status_created
// (sequence_id, status, created_at, id) from where the walk stopped; the chunk's runs that match
// the release are made due at the time of the change. The walk reads chunkSize index entries per
// chunk whatever the sequence's size, and its position is written in the chunk's transaction:
// a crash resumes at that chunk. A release being walked is locked (SKIP LOCKED): two processes
// walk two releases, never one twice.
//
// Lock order: the release's row, then the chunk's runs (by primary key). The sequence's status is
// read without a lock.

const WALKED: readonly string[] = ['pending', 'running'];

interface ReleaseRow {
  sequence_id: string;
  kind: ReleaseKind;
  requested_at: unknown;
  position_status: string;
  position_at: unknown;
  position_id: string;
}

export interface ReleaseChunk {
  // Runs made due by this chunk.
  released: number;
  // Whether a release was found to work on (false: nothing is left to do).
  worked: boolean;
}

// Whether any release is waiting: one look, without a transaction (the task's idle poll).
export async function hasPendingReleases(db: Database): Promise<boolean> {
  const rows = await select<{ kind: string }>(db, 'SELECT kind FROM sequence_run_releases LIMIT 1', []);
  return rows.length > 0;
}

export async function releaseRunsChunk(db: Database, chunkSize: number): Promise<ReleaseChunk> {
  const limit = Math.max(1, Math.floor(chunkSize));
  return withTransaction(db, async (transaction) => {
    // In key order, no sort: with a sort, InnoDB would lock every row it read for it, and a
    // second process would find all the releases taken.
    const [release] = await select<ReleaseRow>(
      db,
      `SELECT sequence_id, kind, requested_at, position_status, position_at, position_id FROM sequence_run_releases
       LIMIT 1${skipLocked(db)}`,
      [],
      transaction,
    );
    if (!release) return { released: 0, worked: false };
    const key = [release.sequence_id, release.kind];
    const done = () => execute(db, 'DELETE FROM sequence_run_releases WHERE sequence_id = ? AND kind = ?', key, transaction);
    if (release.kind === 'unpark') {
      // Paused again meanwhile: its runs would only be set aside again. A later re-activation
      // records a release of its own.
      const [sequence] = await select<{ status: string }>(db, 'SELECT status FROM sequences WHERE id = ?', [release.sequence_id], transaction);
      if (sequence?.status !== 'active') {
        await done();
        return { released: 0, worked: true };
      }
    }
    // Strictly after the last run done, in the lists' keyset form: the id part is a range of
    // its own, so the walk starts at the cursor even among runs created in the same instant
    // (an enrollment of 500 shares one created_at; a seeded million, too).
    const after = afterPosition('created_at', 'id', 'ASC', { at: toDate(release.position_at).getTime(), id: release.position_id });
    const runs = await select<{ id: string; created_at: unknown }>(
      db,
      `SELECT id, created_at FROM ${readThrough(db, 'sequence_runs', 'r', 'sequence_runs_sequence_status_created')}
       WHERE sequence_id = ? AND status = ?${after.sql} ORDER BY created_at, id LIMIT ${limit}`,
      [release.sequence_id, release.position_status, ...after.values],
      transaction,
    );
    const dueAt = toDate(release.requested_at);
    let released = 0;
    if (runs.length > 0) {
      const predicate = RELEASE_PREDICATES[release.kind];
      // Woken: due at the time of the change (the run's state machine, runs/run-state.ts).
      const { set, values } = runChangeSql(nextRunState({ status: release.position_status as RunStatus }, { kind: 'wake' }, dueAt), dueAt);
      released = await execute(
        db,
        `UPDATE sequence_runs SET ${set} WHERE id IN (?) AND status = ? AND current_step_id IS NOT NULL AND ${predicate}`,
        [...values, runs.map((run) => run.id), release.position_status, ...(release.kind === 'window' ? [dueAt] : [])],
        transaction,
      );
    }
    if (runs.length === limit) {
      const last = runs[runs.length - 1]!;
      await execute(
        db,
        'UPDATE sequence_run_releases SET position_at = ?, position_id = ?, updated_at = ? WHERE sequence_id = ? AND kind = ?',
        [toDate(last.created_at), last.id, new Date(), ...key],
        transaction,
      );
      return { released, worked: true };
    }
    // This status is walked: the next one, or the release is done.
    const next = WALKED[WALKED.indexOf(release.position_status) + 1];
    if (next) {
      await execute(
        db,
        'UPDATE sequence_run_releases SET position_status = ?, position_at = ?, position_id = ?, updated_at = ? WHERE sequence_id = ? AND kind = ?',
        [next, new Date(0), '', new Date(), ...key],
        transaction,
      );
    } else {
      await done();
    }
    return { released, worked: true };
  });
}

// Chunks until nothing is left, maxChunks have run, or shouldStop() says so. Answers the runs
// made due, and whether releases are left (then the caller comes back at once).
export async function releasePendingRuns(
  db: Database,
  options: { chunkSize: number; maxChunks: number; shouldStop?: () => boolean; onReleased?: (released: number) => void },
): Promise<{ released: number; more: boolean }> {
  if (!(await hasPendingReleases(db))) return { released: 0, more: false };
  let released = 0;
  for (let chunk = 0; chunk < options.maxChunks; chunk += 1) {
    if (options.shouldStop?.()) return { released, more: true };
    const done = await releaseRunsChunk(db, options.chunkSize);
    if (!done.worked) return { released, more: false };
    released += done.released;
    if (done.released > 0) options.onReleased?.(done.released);
  }
  return { released, more: true };
}
