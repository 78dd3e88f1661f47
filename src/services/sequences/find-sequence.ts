import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { forShare, select } from '../../db/sql/statements';
import { ConflictError, NotFoundError } from '../../errors/app-errors';
import type { ExitRule } from '../../schemas/sequence-definition';
import { normalizeId } from '../ids';
import type { RequiredSequence } from '../runs/required-sequence';
import { readSteps } from '../runs/sequence-versions';

// Every sequence operation starts here (docs/decisions.md "Sequence errors"): a sequence of another
// account is as unknown as one that does not exist.
export async function requireSequence(
  db: Database,
  input: { accountId: string; sequenceId: string; mustBeActive: boolean },
  transaction?: Transaction,
): Promise<string> {
  // Only the row: reading the steps and exit rules is the enrolling operations' need
  // (requireSequenceRow), not every reader's.
  return (await lockedSequence(db, input, transaction)).id;
}

export async function requireSequenceRow(
  db: Database,
  input: { accountId: string; sequenceId: string; mustBeActive: boolean },
  transaction?: Transaction,
): Promise<RequiredSequence> {
  const sequence = await lockedSequence(db, input, transaction);
  const version = sequence.version === null ? null : Number(sequence.version);
  const steps = await readSteps(db, sequence.id, version, transaction);
  const exitWhen = sequence.exit_when === null ? [] : parseJson<ExitRule[]>(sequence.exit_when);
  return { id: sequence.id, version, firstStepId: steps[0]?.id ?? null, exitWhen };
}

async function lockedSequence(
  db: Database,
  input: { accountId: string; sequenceId: string; mustBeActive: boolean },
  transaction?: Transaction,
) {
  const id = normalizeId(input.sequenceId);
  const [sequence] = id
    ? await select<{ id: string; status: string; version: number | string | null; exit_when: string | null }>(
        db,
        // Enrolling, the status (and the version new runs start on, and the exit rules) must
        // stay until the runs are in: a shared lock.
        `SELECT id, status, version, exit_when FROM sequences WHERE id = ? AND account_id = ?${input.mustBeActive && transaction ? forShare(db) : ''}`,
        [id, input.accountId],
        transaction,
      )
    : [];
  if (!sequence) throw new NotFoundError('Sequence');
  if (input.mustBeActive && sequence.status !== 'active') throw new ConflictError('Sequence is not active', 'sequence_not_active');
  return sequence;
}
