import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import { normalizeId } from '../ids';
import { activeRun } from './runs';

// Where a sequence's active runs are: how many at each (version, step), for the dashboard's
// sequence page. One grouped statement through the sequence_runs_position index, however many
// runs there are; the sequence is looked up apart only when it has no active run, to tell an
// idle sequence from an unknown one (404, as on every route of a sequence).

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
    'SELECT version, current_step_id, COUNT(*) AS runs FROM sequence_runs' +
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
