import type { Database } from '../db/database';
import { withTransaction } from '../db/sql/transaction';
import { NotFoundError } from '../errors/app-errors';
import { Account } from '../models';

export interface AccountSummary {
  id: string;
  name: string;
  maxActiveRuns: number | null;
  createdAt: string;
}

function summarize(account: Account): AccountSummary {
  return {
    id: account.id,
    name: account.name,
    maxActiveRuns: account.maxActiveRuns ?? null,
    createdAt: account.createdAt.toISOString(),
  };
}

export async function createAccount(
  db: Database,
  input: { name: string; maxActiveRuns?: number | null },
): Promise<AccountSummary> {
  const account = await withTransaction(db, (transaction) =>
    Account.create({ name: input.name, maxActiveRuns: input.maxActiveRuns ?? null }, { transaction }),
  );
  return summarize(account);
}

export async function setMaxActiveRuns(
  db: Database,
  input: { id: string; maxActiveRuns: number | null },
): Promise<AccountSummary> {
  return withTransaction(db, async (transaction) => {
    const account = await Account.findByPk(input.id, { transaction });
    if (!account) throw new NotFoundError('Account');
    account.maxActiveRuns = input.maxActiveRuns;
    await account.save({ transaction });
    return summarize(account);
  });
}

export async function countAccounts(db: Database): Promise<number> {
  return Account.count();
}
