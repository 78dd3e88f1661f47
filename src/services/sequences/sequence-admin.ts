import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError } from '../../errors/app-errors';
import { Account, Sequence } from '../../models';
import type { SequenceStatus } from '../../models/sequence';

// Sequences are managed by the admin command line (CONTRACT.md: no REST for them).

export interface SequenceSummary {
  id: string;
  accountId: string;
  name: string;
  status: SequenceStatus;
  createdAt: string;
  updatedAt: string;
}

function summarize(sequence: Sequence): SequenceSummary {
  return {
    id: sequence.id,
    accountId: sequence.accountId,
    name: sequence.name,
    status: sequence.status,
    createdAt: sequence.createdAt.toISOString(),
    updatedAt: sequence.updatedAt.toISOString(),
  };
}

export async function createSequence(
  db: Database,
  input: { accountId: string; name: string; status?: SequenceStatus },
): Promise<SequenceSummary> {
  return withTransaction(db, async (transaction) => {
    const account = await Account.findByPk(input.accountId, { transaction });
    if (!account) throw new NotFoundError('Account');
    const sequence = await Sequence.create(
      { accountId: input.accountId, name: input.name, status: input.status ?? 'draft' },
      { transaction },
    );
    return summarize(sequence);
  });
}

export async function setSequenceStatus(
  db: Database,
  input: { id: string; status: SequenceStatus; accountId?: string },
): Promise<SequenceSummary> {
  return withTransaction(db, async (transaction) => {
    // The CLI is the operator's and reaches every account; the dashboard passes its own.
    const where = input.accountId ? { id: input.id, accountId: input.accountId } : { id: input.id };
    const sequence = await Sequence.findOne({ where, transaction });
    if (!sequence) throw new NotFoundError('Sequence');
    sequence.status = input.status;
    await sequence.save({ transaction });
    return summarize(sequence);
  });
}

export async function listSequences(db: Database, input: { accountId: string }): Promise<SequenceSummary[]> {
  const sequences = await Sequence.findAll({ where: { accountId: input.accountId }, order: [['createdAt', 'ASC']] });
  return sequences.map(summarize);
}
