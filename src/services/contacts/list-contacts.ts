import type { Database } from '../../db/database';
import { select } from '../../db/sql';
import type { SubscriptionStatus } from '../../models/contact';
import { type ContactDto, normalizeEmail } from '../../schemas/contact';
import type { CursorScope, Position } from '../lists/cursor';
import {
  afterPosition,
  orderBy,
  readThrough,
  startPosition,
  toPage,
  type Direction,
  type Page,
  type PageRequest,
} from '../lists/keyset';
import { CONTACT_COLUMNS, contactFromRow, type ContactRow } from './contact-row';

// GET /contacts: the account's contacts, a keyset walk of one index per query
// (db/migrations/20261202000000-create-list-indexes.js has the index design).
// - Default: newest first by (created_at, id). Both never change, so a walk sees every contact
//   that existed when it began exactly once, however the contacts change meanwhile.
// - sort=updatedAt: oldest change first by (updated_at, id), for incremental sync. A contact
//   changed during the walk moves behind the walk's position and may be seen again.
// - tag: the walk runs over contact_tags, which carries both sort columns, joined to contacts by
//   primary key.

export type ContactSort = 'createdAt' | 'updatedAt';

export interface ContactListFilters {
  tag?: string;
  emailSubscriptionStatus?: SubscriptionStatus;
  whatsappSubscriptionStatus?: SubscriptionStatus;
  q?: string;
  createdAfter?: string;
  updatedSince?: string;
  sort?: ContactSort;
}

// A change becomes visible at COMMIT, a little after it took its updated_at. A sort=updatedAt
// walk that has passed that time would never meet the change (nor, the row having moved, the
// contact's old position). So a page's cursor never goes further than this long before the
// page was read: a write that takes its timestamp and commits within this window cannot land
// behind the walk. Writers take the timestamp once they hold their locks, so the window is
// what the remaining statements and the clocks of two instances can differ by. The price: the
// rows of the last SETTLE_MS may come again on the next page.
export const UPDATED_SORT_SETTLE_MS = 5_000;

// Greater than any UTF-8 text that starts with the prefix (U+10FFFF is the highest code point,
// and both databases compare email_normalized byte for byte).
const AFTER_EVERY_CONTINUATION = '\u{10FFFF}';

export async function listContacts(
  db: Database,
  input: { accountId: string } & ContactListFilters & PageRequest,
  options: { settleMs?: number } = {},
): Promise<Page<ContactDto>> {
  const sort = input.sort ?? 'createdAt';
  const direction: Direction = sort === 'updatedAt' ? 'ASC' : 'DESC';
  const q = input.q === undefined ? undefined : normalizeEmail(input.q);
  const scope = contactListScope(input);
  const start = startPosition(scope, input);
  const readAt = new Date();

  // Which index drives the read (the migration's comment has the design):
  // - q: the email index's prefix range, its matches sorted; bounded by how many emails start
  //   with q, whatever the account's size. A tag is then checked per match by primary key.
  // - else a tag: contact_tags' walk in the list's order (the range conditions run on its
  //   copies of the timestamps).
  // - else the contacts index of the status filter and sort, or of the sort alone.
  const byPrefix = q !== undefined && q !== '';
  const walk = input.tag === undefined || byPrefix ? 'c' : 't';
  const sortColumn = `${walk}.${sort === 'updatedAt' ? 'updated_at' : 'created_at'}`;
  const idColumn = walk === 't' ? 't.contact_id' : 'c.id';
  const conditions: string[] = [];
  const values: unknown[] = [];
  const where = (sql: string, ...bound: unknown[]) => {
    conditions.push(sql);
    values.push(...bound);
  };

  where(`${walk}.account_id = ?`, input.accountId);
  if (input.tag !== undefined) {
    if (walk === 't') where('t.tag = ?', input.tag);
    else where('EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag = ?)', input.tag);
  }
  if (input.emailSubscriptionStatus) where('c.email_subscription_status = ?', input.emailSubscriptionStatus);
  if (input.whatsappSubscriptionStatus) where('c.whatsapp_subscription_status = ?', input.whatsappSubscriptionStatus);
  if (byPrefix) {
    where('c.email_normalized >= ? AND c.email_normalized < ?', q, `${q}${AFTER_EVERY_CONTINUATION}`);
  }
  if (input.createdAfter) where(`${walk}.created_at > ?`, new Date(input.createdAfter));
  if (input.updatedSince) where(`${walk}.updated_at > ?`, new Date(input.updatedSince));

  const after = afterPosition(sortColumn, idColumn, direction, start);
  const order = sort === 'updatedAt' ? 'updated' : 'created';
  // The joined walk is told its order: contact_tags first, each contact by primary key.
  // (STRAIGHT_JOIN on MySQL; SQLite keeps the left table of a CROSS JOIN outside.)
  const from =
    walk === 't'
      ? `${readThrough(db, 'contact_tags', 't', `contact_tags_account_tag_${order}`)} ` +
        `${db.dialect === 'sqlite' ? 'CROSS JOIN' : 'STRAIGHT_JOIN'} contacts c ON c.id = t.contact_id`
      : readThrough(db, 'contacts', 'c', contactsIndex(input, byPrefix, order));
  const rows = await select<ContactRow>(
    db,
    `SELECT ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')} FROM ${from}` +
      ` WHERE ${conditions.join(' AND ')}${after.sql}${orderBy(sortColumn, idColumn, direction)} LIMIT ?`,
    [...values, ...after.values, input.limit + 1],
  );

  const settleMs = options.settleMs ?? UPDATED_SORT_SETTLE_MS;
  const horizon = readAt.getTime() - settleMs;
  return toPage(scope, input, rows, {
    position: (row) => ({ at: sort === 'updatedAt' ? row.updated_at : row.created_at, id: row.id }),
    item: contactFromRow,
    cap:
      sort === 'updatedAt'
        ? (position: Position) => (position.at >= horizon ? { at: horizon, id: '' } : position)
        : undefined,
  });
}

// The contacts index that drives a read without a tag walk: the prefix's, else (newest first)
// the first status filter's, else the sort's. Other filters are checked on the rows it reads.
function contactsIndex(filters: ContactListFilters, byPrefix: boolean, order: 'created' | 'updated'): string {
  if (byPrefix) return 'contacts_account_email_unique';
  if (order === 'created' && filters.emailSubscriptionStatus) return 'contacts_account_email_status_created';
  if (order === 'created' && filters.whatsappSubscriptionStatus) return 'contacts_account_whatsapp_status_created';
  return `contacts_account_${order}`;
}

// What a cursor of this list is bound to: the account, every filter, the sort.
export function contactListScope(input: { accountId: string } & ContactListFilters): CursorScope {
  return {
    list: 'contacts',
    accountId: input.accountId,
    filters: {
      tag: input.tag,
      emailSubscriptionStatus: input.emailSubscriptionStatus,
      whatsappSubscriptionStatus: input.whatsappSubscriptionStatus,
      q: input.q === undefined ? undefined : normalizeEmail(input.q),
      createdAfter: instant(input.createdAfter),
      updatedSince: instant(input.updatedSince),
      sort: input.sort ?? 'createdAt',
    },
  };
}

// The filter's instant, so that equal instants written differently share a cursor.
function instant(value: string | undefined): number | undefined {
  return value === undefined ? undefined : new Date(value).getTime();
}
