import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database';
import { toIso } from '../../db/sql/rows';
import { forUpdate, insertRows, select, execute } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError } from '../../errors/app-errors';
import type { SequenceStatus } from '../../schemas/statuses';

// Sequences are created and moved between statuses by the admin command line and the
// dashboard; the public API has no call for that (docs/decisions.md, "Accounts, keys and
// sequences").

export interface SequenceSummary {
  id: string;
  accountId: string;
  name: string;
  status: SequenceStatus;
  createdAt: string;
  updatedAt: string;
}

interface SequenceRow {
  id: string;
  account_id: string;
  name: string;
  status: SequenceStatus;
  created_at: unknown;
  updated_at: unknown;
}

const COLUMNS = 'id, account_id, name, status, created_at, updated_at';

function summarize(row: SequenceRow): SequenceSummary {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    status: row.status,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

export async function createSequence(
  db: Database,
  input: { accountId: string; name: string; status?: SequenceStatus },
): Promise<SequenceSummary> {
  return withTransaction(db, async (transaction) => {
    const [account] = await select<{ id: string }>(db, `SELECT id FROM accounts WHERE id = ?`, [input.accountId], transaction);
    if (!account) throw new NotFoundError('Account');
    const now = new Date();
    const row: SequenceRow = {
      id: randomUUID(),
      account_id: account.id,
      name: input.name,
      status: input.status ?? 'draft',
      created_at: now,
      updated_at: now,
    };
    await insertRows(db, 'sequences', COLUMNS.split(', '), [[row.id, row.account_id, row.name, row.status, now, now]], transaction);
    return summarize(row);
  });
}

export async function setSequenceStatus(
  db: Database,
  input: { id: string; status: SequenceStatus; accountId?: string },
): Promise<SequenceSummary> {
  return withTransaction(db, async (transaction) => {
    // The CLI is the operator's and reaches every account; the dashboard passes its own.
    const scope = input.accountId === undefined ? '' : ' AND account_id = ?';
    const [row] = await select<SequenceRow>(
      db,
      `SELECT ${COLUMNS} FROM sequences WHERE id = ?${scope}${forUpdate(db)}`,
      input.accountId === undefined ? [input.id] : [input.id, input.accountId],
      transaction,
    );
    if (!row) throw new NotFoundError('Sequence');
    // Setting the status it already has changes nothing, updatedAt included.
    if (row.status === input.status) return summarize(row);
    const now = new Date();
    await execute(db, 'UPDATE sequences SET status = ?, updated_at = ? WHERE id = ?', [input.status, now, row.id], transaction);
    return summarize({ ...row, status: input.status, updated_at: now });
  });
}

export async function listSequences(db: Database, input: { accountId: string }): Promise<SequenceSummary[]> {
  const rows = await select<SequenceRow>(db, `SELECT ${COLUMNS} FROM sequences WHERE account_id = ? ORDER BY created_at, id`, [input.accountId]);
  return rows.map(summarize);
}
