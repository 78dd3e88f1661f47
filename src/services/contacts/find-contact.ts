import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
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

// The contact's row, as last committed. (A writer locks it with lockContactRow instead.)
export async function findContactRow(db: Database, input: { accountId: string; id: string }): Promise<ContactRow> {
  const id = normalizeId(input.id);
  if (!id) throw new NotFoundError('Contact');
  const [row] = await select<ContactRow>(db, `${CONTACT_SELECT} WHERE id = ? AND account_id = ?`, [id, input.accountId]);
  if (!row) throw new NotFoundError('Contact');
  return row;
}
