import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { ListedActivity } from '../../schemas/activity';
import { findContactRow } from '../contacts/find-contact';
import type { CursorScope } from '../lists/cursor';
import { afterPosition, orderBy, readThrough, startPosition, toPage, type Page, type PageRequest } from '../lists/keyset';
import { listedActivity, type ActivityRow } from './activity-rows';

// GET /contacts/{id}/activities: the contact's activities, newest first by (occurred_at, id),
// read through activities_contact_occurred from the cursor on. The contact is checked first: an
// unknown id, or another account's, is a 404.
export async function listContactActivities(
  db: Database,
  input: { accountId: string; contactId: string } & PageRequest,
): Promise<Page<ListedActivity>> {
  const contact = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  const scope: CursorScope = { list: 'contacts.activities', accountId: input.accountId, filters: { owner: contact.id } };
  const after = afterPosition('occurred_at', 'id', 'DESC', startPosition(scope, input));
  const rows = await select<ActivityRow>(
    db,
    `SELECT row_id, id, contact_id, name, properties, occurred_at, received_at FROM ${readThrough(db, 'activities', 'a', 'activities_contact_occurred')}` +
      ` WHERE account_id = ? AND contact_id = ?${after.sql}${orderBy('occurred_at', 'id', 'DESC')} LIMIT ?`,
    [input.accountId, contact.id, ...after.values, input.limit + 1],
  );
  return toPage(scope, input, rows, { position: (row) => ({ at: row.occurred_at, id: row.id }), item: listedActivity });
}
