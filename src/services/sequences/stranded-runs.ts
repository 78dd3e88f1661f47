import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import { activeRun } from '../runs/runs';

// Emptying the steps of a sequence whose runs are at steps would leave them, and every run
// started after it, with no step to go to: new runs would wait for outside moves, and no move
// could place the old ones on a version without steps. Refused while any active run is at a step
// (docs/sequences.md "Versions"); pausing the sequence is how to stop it. Called with the
// sequence's row locked, so no enrollment adds a run meanwhile.
export async function refuseEmptyingWithRuns(db: Database, sequenceId: string, transaction: Transaction): Promise<void> {
  const [row] = await select<{ n: number | string }>(
    db,
    `SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND current_step_id IS NOT NULL AND ${activeRun(db)}`,
    [sequenceId],
    transaction,
  );
  const runs = Number(row?.n ?? 0);
  if (runs === 0) return;
  const message =
    `${runs === 1 ? '1 active run is' : `${runs} active runs are`} at steps of this sequence: an empty list would leave ` +
    `${runs === 1 ? 'it' : 'them'}, and runs started later, with no step to go to. Keep at least one step, set the ` +
    'status to "paused" to stop the sequence, or unenroll those runs first';
  throw new ValidationError(`steps: ${message}`, [{ path: 'steps', message }]);
}
