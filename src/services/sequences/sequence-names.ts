import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { normalizeId } from '../ids';

// The names of a page's worth of sequences, in one statement, whatever their status: a
// contact's runs name their sequences by id, an archived one too (the list leaves those out).
// Ids of other accounts or of no sequence are simply absent.
export async function sequenceNames(db: Database, input: { accountId: string; ids: string[] }): Promise<Record<string, string>> {
  const ids = [...new Set(input.ids.map(normalizeId).filter((id): id is string => id !== null))];
  if (ids.length === 0) return {};
  const rows = await select<{ id: string; name: string }>(db, 'SELECT id, name FROM sequences WHERE account_id = ? AND id IN (?)', [input.accountId, ids]);
  return Object.fromEntries(rows.map((row) => [row.id, row.name]));
}
