import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { MessageDto } from '../../schemas/message';
import { findContactRow } from '../contacts/find-contact';
import type { CursorScope } from '../lists/cursor';
import { afterPosition, orderBy, readThrough, startPosition, toPage, type Page, type PageRequest } from '../lists/keyset';
import { MESSAGE_COLUMNS, messageFromRow, type MessageRow } from './message-rows';

// GET /contacts/{id}/messages: the contact's messages, newest first by (created_at, id), read
// through messages_contact_created from the cursor on. The contact is checked first: an
// unknown id, or another account's, is a 404. Test sends (the message editor's, `test` true)
// were rendered for the contact but never sent to them: they are not listed.
export async function listContactMessages(
  db: Database,
  input: { accountId: string; contactId: string } & PageRequest,
): Promise<Page<MessageDto>> {
  const contact = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  const scope: CursorScope = { list: 'contacts.messages', accountId: input.accountId, filters: { owner: contact.id } };
  const after = afterPosition('created_at', 'id', 'DESC', startPosition(scope, input));
  const rows = await select<MessageRow>(
    db,
    `SELECT ${MESSAGE_COLUMNS} FROM ${readThrough(db, 'messages', 'm', 'messages_contact_created')}` +
      ` WHERE contact_id = ? AND account_id = ? AND test = ?${after.sql}${orderBy('created_at', 'id', 'DESC')} LIMIT ?`,
    [contact.id, input.accountId, false, ...after.values, input.limit + 1],
  );
  return toPage(scope, input, rows, { position: (row) => ({ at: row.created_at, id: row.id }), item: messageFromRow });
}
