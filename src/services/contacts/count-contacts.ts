import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { normalizeEmail } from '../../schemas/contact';
import { filteredRead, type ContactListFilters } from './list-contacts';

// The dashboard's "1-25 of 12,345": counted up to a cap, never over the whole account. The
// count reads the same table and index as the list's first page, at most CONTACT_COUNT_CAP + 1
// entries of it, so it costs what a page of that many rows would, whether the account holds
// ten thousand contacts or ten million.
export const CONTACT_COUNT_CAP = 10_000;

export async function countContacts(
  db: Database,
  input: { accountId: string } & Omit<ContactListFilters, 'sort' | 'updatedSince'>,
): Promise<{ count: number; capped: boolean }> {
  const q = (input.q === undefined ? '' : normalizeEmail(input.q)) || undefined;
  const read = await filteredRead(db, input, q, 'created');
  const [row] = await select<{ n: unknown }>(
    db,
    `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM ${read.from} WHERE ${read.conditions.join(' AND ')} LIMIT ?) capped`,
    [...read.values, CONTACT_COUNT_CAP + 1],
  );
  const n = Number(row?.n ?? 0);
  return n > CONTACT_COUNT_CAP ? { count: CONTACT_COUNT_CAP, capped: true } : { count: n, capped: false };
}
