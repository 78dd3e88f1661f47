import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { forShare, select } from '../../db/sql/statements';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import { normalizeId } from '../ids';

// Every sequence operation starts here (docs/decisions.md "Sequence errors"): a sequence of another
// account is as unknown as one that does not exist.
export async function requireSequence(
  db: Database,
  input: { accountId: string; sequenceId: string; mustBeActive: boolean },
  transaction?: Transaction,
): Promise<string> {
  const id = normalizeId(input.sequenceId);
  const [sequence] = id
    ? await select<{ id: string; status: string }>(
        db,
        // Enrolling, the status must stay `active` until the runs are in: a shared lock.
        `SELECT id, status FROM sequences WHERE id = ? AND account_id = ?${input.mustBeActive && transaction ? forShare(db) : ''}`,
        [id, input.accountId],
        transaction,
      )
    : [];
  if (!sequence) throw new NotFoundError('Sequence');
  if (input.mustBeActive && sequence.status !== 'active') throw new ConflictError('Sequence is not active', 'sequence_not_active');
  return sequence.id;
}
