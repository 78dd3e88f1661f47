import type { Database } from '../db/database';
import { select } from '../db/sql/statements';
import { NotFoundError } from '../errors/app-errors';
import { Account } from '../models';
import { activeRun } from './runs/runs';

export interface AccountUsage {
  id: string;
  name: string;
  maxActiveRuns: number | null;
  activeRuns: number;
}

// The account as its people see it: the active-run limit beside what counts against it.
export async function accountUsage(db: Database, input: { accountId: string }): Promise<AccountUsage> {
  const account = await Account.findByPk(input.accountId);
  if (!account) throw new NotFoundError('Account');
  const [row] = await select<{ n: unknown }>(
    db,
    `SELECT COUNT(*) AS n FROM sequence_runs WHERE account_id = ? AND ${activeRun(db)}`,
    [input.accountId],
  );
  return { id: account.id, name: account.name, maxActiveRuns: account.maxActiveRuns ?? null, activeRuns: Number(row?.n ?? 0) };
}
