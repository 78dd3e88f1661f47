import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { normalizeId } from '../ids';

// The emails of a page's worth of contacts, in one statement: a run list names its contacts
// by id, a person by email. Ids of other accounts or of no contact are simply absent.
export async function contactEmails(db: Database, input: { accountId: string; ids: string[] }): Promise<Record<string, string>> {
  const ids = [...new Set(input.ids.map(normalizeId).filter((id): id is string => id !== null))];
  if (ids.length === 0) return {};
  const rows = await select<{ id: string; email: string }>(db, 'SELECT id, email FROM contacts WHERE account_id = ? AND id IN (?)', [
    input.accountId,
    ids,
  ]);
  return Object.fromEntries(rows.map((row) => [row.id, row.email]));
}
