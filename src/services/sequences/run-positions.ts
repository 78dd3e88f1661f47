import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import { normalizeId } from '../ids';
import { readThrough } from '../lists/keyset';
import { activeRun } from '../runs/runs';

// Where a sequence's active runs are: how many at each (version, step), for the dashboard's
// sequence page, in one grouped statement. It reads only the sequence's active entries of
// (sequence_id, active, created_at, id): left to itself MariaDB takes sequence_runs_position,
// which holds every run the sequence ever had, ended ones too (over 100,000 runs of which
// 10,000 active, 170 ms against 24 ms). The sequence is looked up apart only when it has no
// active run, to tell an idle sequence from an unknown one (404, as on every route of one).

export interface RunPosition {
  // null for the runs of a sequence that never had steps, moved from outside.
  version: number | null;
  stepId: string | null;
  activeRuns: number;
}

export async function countRunPositions(db: Database, input: { accountId: string; sequenceId: string }): Promise<RunPosition[]> {
  const id = normalizeId(input.sequenceId);
  if (!id) throw new NotFoundError('Sequence');
  const rows = await select<{ version: number | string | null; current_step_id: string | null; runs: number | string }>(
    db,
    `SELECT version, current_step_id, COUNT(*) AS runs FROM ${readThrough(db, 'sequence_runs', 'r', 'sequence_runs_sequence_active_created')}` +
      ` WHERE sequence_id = ? AND account_id = ? AND ${activeRun(db)} GROUP BY version, current_step_id`,
    [id, input.accountId],
  );
  if (rows.length === 0) {
    const [sequence] = await select<{ id: string }>(db, 'SELECT id FROM sequences WHERE id = ? AND account_id = ?', [id, input.accountId]);
    if (!sequence) throw new NotFoundError('Sequence');
  }
  return rows
    .map((row) => ({
      version: row.version === null ? null : Number(row.version),
      stepId: row.current_step_id ?? null,
      activeRuns: Number(row.runs),
    }))
    .sort((a, b) => (b.version ?? 0) - (a.version ?? 0) || (a.stepId ?? '').localeCompare(b.stepId ?? ''));
}
