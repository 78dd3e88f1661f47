import type { Database } from '../../db/database';
import { execute, forUpdate, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import { normalizeId } from '../ids';

// DELETE /sequences/{id}, the dashboard's Delete and the command line's sequence:delete
// (docs/decisions.md "Deleting and archiving sequences"): a sequence with no run on record goes,
// with its versions and its enrollment records (which started no run); one that has runs stays,
// and is archived instead, so that its runs, their timelines and events keep their sequence.

export const SEQUENCE_HAS_RUNS = 'Sequence has runs, so it cannot be deleted: archive it instead (status archived)';

export async function deleteSequence(
  db: Database,
  // The command line is the operator's and reaches every account; the API and the dashboard pass theirs.
  input: { id: string; accountId?: string },
): Promise<{ id: string; accountId: string }> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Sequence');
  return withTransaction(db, async (transaction) => {
    const scope = input.accountId === undefined ? '' : ' AND account_id = ?';
    const [sequence] = await select<{ id: string; account_id: string }>(
      db,
      `SELECT id, account_id FROM sequences WHERE id = ?${scope}${forUpdate(db)}`,
      input.accountId === undefined ? [id] : [id, input.accountId],
      transaction,
    );
    if (!sequence) throw new NotFoundError('Sequence');
    // Held exclusively, the sequence takes no new run until this commits: enrolling locks it
    // shared first (and a run's insert checks it through its foreign key), so a trigger that
    // comes now waits and then finds no sequence, and one that came first has committed its
    // run, which this read sees (READ COMMITTED; on SQLite one writer at a time). So the
    // check cannot be overtaken, and the cascade of sequence_runs' foreign key never runs.
    const [run] = await select<{ id: string }>(db, 'SELECT id FROM sequence_runs WHERE sequence_id = ? LIMIT 1', [id], transaction);
    if (run) throw new ConflictError(SEQUENCE_HAS_RUNS, 'sequence_has_runs');
    // Its versions and enrollment records go with it (ON DELETE CASCADE).
    await execute(db, 'DELETE FROM sequences WHERE id = ?', [id], transaction);
    return { id, accountId: sequence.account_id };
  });
}
