import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { forUpdate, select } from '../../db/sql';
import { NotFoundError } from '../../errors';
import { type ContactDto, normalizeEmail } from '../../schemas/contact';
import { isStorableText } from '../../schemas/text';
import { normalizeId } from '../ids';
import { CONTACT_SELECT, contactFromRow, type ContactRow } from './contact-row';

export async function getContact(db: Database, input: { accountId: string; id: string }): Promise<ContactDto> {
  return contactFromRow(await findContactRow(db, input));
}

export async function getContactByEmail(
  db: Database,
  input: { accountId: string; email: string },
): Promise<ContactDto> {
  // No stored email holds such characters; and SQLite could not even be asked.
  if (!isStorableText(input.email)) throw new NotFoundError('Contact');
  const [row] = await select<ContactRow>(db, `${CONTACT_SELECT} WHERE account_id = ? AND email_normalized = ?`, [
    input.accountId,
    normalizeEmail(input.email),
  ]);
  if (!row) throw new NotFoundError('Contact');
  return contactFromRow(row);
}

// The contact's row, locked for the rest of the transaction when one is given: the read in a
// read-modify-write, so concurrent writers to one contact queue instead of losing updates.
export async function findContactRow(
  db: Database,
  input: { accountId: string; id: string },
  transaction?: Transaction,
): Promise<ContactRow> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Contact');
  const lock = transaction ? forUpdate(db) : '';
  const [row] = await select<ContactRow>(
    db,
    `${CONTACT_SELECT} WHERE id = ? AND account_id = ?${lock}`,
    [id, input.accountId],
    transaction,
  );
  if (!row) throw new NotFoundError('Contact');
  return row;
}
