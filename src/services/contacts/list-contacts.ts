import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { SubscriptionStatus } from '../../schemas/statuses';
import { type ContactDto, normalizeEmail } from '../../schemas/contact';
import type { CursorScope } from '../lists/cursor';
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
import { beforeHorizon, pastHorizon, settledStart, toSettledPage, type SettledStart, type SyncState } from '../lists/settled-walk';
import { EMAIL_PREFIX_LENGTH } from './contact-email-prefixes';
import { CONTACT_COLUMNS, contactFromRow, type ContactRow } from './contact-row';

// GET /contacts: the account's contacts, a keyset walk of one index per query
// (db/migrations/20261202000000-create-list-indexes.js has the index design).
// - Default: newest first by (created_at, id). Both never change, so a walk sees every contact
//   that existed when it began exactly once, however the contacts change meanwhile.
// - sort=updatedAt: oldest change first by (updated_at, id), for incremental sync: a settled
//   walk (src/services/lists/settled-walk.ts), which serves the changes made before its
//   horizon, each contact at most once, and ends with a resumeCursor for the next walk.
// - tag: the walk runs over contact_tags, which carries both sort columns, joined to contacts by
//   primary key.
// - q: the walk runs over contact_email_prefixes in the same way (see prefixRead for a q longer
//   than the mirror's prefixes).
// Every walk then reads its page's rows by primary key. Contact ids are time-ordered
// (newRowId, src/services/ids.ts), so the rows of a page sit side by side there: with random ids
// those reads were what made a page slower in a table of a million contacts than in a small one.

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

// A sort=updatedAt walk's horizon lies this long before the walk began: longer than a write
// takes from its timestamp to its COMMIT, plus the clock difference of two instances (see
// settled-walk.ts). The price: a change is listed this long after it was made, at the earliest.
export const UPDATED_SORT_SETTLE_MS = 5_000;

// Greater than any UTF-8 text that starts with the prefix (U+10FFFF is the highest code point,
// and both databases compare email_normalized byte for byte).
const AFTER_EVERY_CONTINUATION = '\u{10FFFF}';

const INVALID_CURSOR =
  'Invalid cursor: pass the nextCursor of the previous page, or the resumeCursor of a sort=updatedAt walk, as given, ' +
  'with the same filters and sort';

export interface ListContactsOptions {
  // The settle window of sort=updatedAt; UPDATED_SORT_SETTLE_MS unless given.
  settleMs?: number;
  // The clock the horizon is taken from; the system clock unless given.
  now?: () => Date;
}

// sync: only with sort=updatedAt.
export type ContactPage = Page<ContactDto> & { sync?: SyncState };

export async function listContacts(
  db: Database,
  input: { accountId: string } & ContactListFilters & PageRequest,
  options: ListContactsOptions = {},
): Promise<ContactPage> {
  const sort = input.sort ?? 'createdAt';
  const direction: Direction = sort === 'updatedAt' ? 'ASC' : 'DESC';
  const q = (input.q === undefined ? '' : normalizeEmail(input.q)) || undefined;
  const scope = contactListScope(input);
  const settleMs = options.settleMs ?? UPDATED_SORT_SETTLE_MS;
  const settled: SettledStart | undefined =
    sort === 'updatedAt' ? settledStart(scope, input, { settleMs, now: options.now ?? (() => new Date()) }, INVALID_CURSOR) : undefined;
  const start = settled ? settled.start : startPosition(scope, input, INVALID_CURSOR);
  const order = sort === 'updatedAt' ? 'updated' : 'created';
  const position = (row: ContactRow) => ({ at: sort === 'updatedAt' ? row.updated_at : row.created_at, id: row.id });
  if (settled && pastHorizon(settled)) return toSettledPage(scope, input, [], { ...settled, settleMs }, { position, item: contactFromRow });

  // Which index drives the read (the migrations' comments have the design):
  // - q of at most EMAIL_PREFIX_LENGTH characters: contact_email_prefixes' walk in the list's
  //   order, like a tag's. A longer q: its matches in the email index, sorted, when there are
  //   fewer than SORTED_PREFIX_MATCHES; else the walk of its first EMAIL_PREFIX_LENGTH
  //   characters, the whole prefix checked on each contact it joins (see prefixRead).
  // - else a tag: contact_tags' walk in the list's order.
  // - else the contacts index of the status filter and sort, or of the sort alone.
  // Whatever the read, the other filters are checked on the rows it reads (a tag by primary
  // key in contact_tags); the range conditions run on the walked table's copies of the
  // timestamps.
  const read = await filteredRead(db, input, q, order);
  const { walk, conditions, values } = read;
  const sortColumn = `${walk}.${sort === 'updatedAt' ? 'updated_at' : 'created_at'}`;
  const idColumn = walk === 'c' ? 'c.id' : `${walk}.contact_id`;

  const after = afterPosition(sortColumn, idColumn, direction, start);
  const before = settled ? beforeHorizon(sortColumn, settled.horizon) : { sql: '', values: [] };
  const rows = await select<ContactRow>(
    db,
    `SELECT ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')} FROM ${read.from}` +
      ` WHERE ${conditions.join(' AND ')}${after.sql}${before.sql}${orderBy(sortColumn, idColumn, direction)} LIMIT ?`,
    [...values, ...after.values, ...before.values, input.limit + 1],
  );

  if (settled) return toSettledPage(scope, input, rows, { ...settled, settleMs }, { position, item: contactFromRow });
  return toPage(scope, input, rows, { position, item: contactFromRow });
}

// The walked table (with its index) and the filters' conditions, without a position: what a
// page reads from, and what the capped count (count-contacts.ts) counts over.
export async function filteredRead(
  db: Database,
  input: { accountId: string } & ContactListFilters,
  q: string | undefined,
  order: 'created' | 'updated',
): Promise<{ walk: Walk; from: string; conditions: string[]; values: unknown[] }> {
  const prefix = q === undefined ? undefined : await prefixRead(db, input.accountId, q);
  const walk: Walk = prefix?.walk ?? (input.tag !== undefined ? 't' : 'c');
  const conditions: string[] = [];
  const values: unknown[] = [];
  const where = (sql: string, ...bound: unknown[]) => {
    conditions.push(sql);
    values.push(...bound);
  };

  where(`${walk}.account_id = ?`, input.accountId);
  if (walk === 'p') where('p.prefix = ?', prefix!.mirrored);
  if (input.tag !== undefined) {
    if (walk === 't') where('t.tag = ?', input.tag);
    else where('EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag = ?)', input.tag);
  }
  if (input.emailSubscriptionStatus) where('c.email_subscription_status = ?', input.emailSubscriptionStatus);
  if (input.whatsappSubscriptionStatus) where('c.whatsapp_subscription_status = ?', input.whatsappSubscriptionStatus);
  if (q !== undefined && prefix!.mirrored !== q) where(...prefixRange(q));
  if (input.createdAfter) where(`${walk}.created_at > ?`, new Date(input.createdAfter));
  if (input.updatedSince) where(`${walk}.updated_at > ?`, new Date(input.updatedSince));
  return { walk, from: source(db, walk, input, q !== undefined, order), conditions, values };
}

// The table a page walks: contacts (c), or a mirror (contact_email_prefixes p, contact_tags t)
// joined to contacts by primary key.
type Walk = 'c' | 'p' | 't';

// A longer q with fewer matches than this is read from the email index and sorted: the sort
// costs at most this many rows, whatever the account's size. Counting up to it is a covering
// read of at most this many index entries.
export const SORTED_PREFIX_MATCHES = 200;

// How q is read, and the prefix whose mirror rows it walks (q itself when it is short enough;
// then every row of the walk matches). A longer q with SORTED_PREFIX_MATCHES matches or more
// walks its first EMAIL_PREFIX_LENGTH characters and reads, to fill a page, the mirror rows
// between its matches: the cost follows how sparse q's matches are among those of its first
// characters near the walk's position, not the account's size as such. (The worst case: many
// contacts share the first characters, few of them (yet at least SORTED_PREFIX_MATCHES) q,
// and those few lie far along the walk.)
async function prefixRead(db: Database, accountId: string, q: string): Promise<{ walk: Walk; mirrored: string }> {
  const characters = Array.from(q);
  if (characters.length <= EMAIL_PREFIX_LENGTH) return { walk: 'p', mirrored: q };
  const [range, ...bounds] = prefixRange(q);
  // The matching emails themselves (in the index on both databases: a covering read), counted
  // here: a COUNT over a LIMITed derived table reads the same entries but runs as a scan of
  // the derived table.
  const matches = await select<{ email_normalized: string }>(
    db,
    `SELECT c.email_normalized FROM ${readThrough(db, 'contacts', 'c', 'contacts_account_email_unique')}` +
      ` WHERE c.account_id = ? AND ${range} LIMIT ?`,
    [accountId, ...bounds, SORTED_PREFIX_MATCHES],
  );
  const few = matches.length < SORTED_PREFIX_MATCHES;
  return { walk: few ? 'c' : 'p', mirrored: characters.slice(0, EMAIL_PREFIX_LENGTH).join('') };
}

function prefixRange(q: string): [string, string, string] {
  return ['c.email_normalized >= ? AND c.email_normalized < ?', q, `${q}${AFTER_EVERY_CONTINUATION}`];
}

// The joined walks are told their order: the mirror first, each contact by primary key.
// (STRAIGHT_JOIN on MySQL; SQLite keeps the left table of a CROSS JOIN outside.)
function source(db: Database, walk: Walk, filters: ContactListFilters, byPrefix: boolean, order: 'created' | 'updated'): string {
  const join = `${db.dialect === 'sqlite' ? 'CROSS JOIN' : 'STRAIGHT_JOIN'} contacts c ON c.id = ${walk}.contact_id`;
  if (walk === 'p') return `${readThrough(db, 'contact_email_prefixes', 'p', `contact_email_prefixes_account_prefix_${order}`)} ${join}`;
  if (walk === 't') return `${readThrough(db, 'contact_tags', 't', `contact_tags_account_tag_${order}`)} ${join}`;
  return readThrough(db, 'contacts', 'c', contactsIndex(filters, byPrefix, order));
}

// The contacts index that drives a read without a mirror walk: the email index for a long q
// with few matches, else (newest first) the first status filter's, else the sort's.
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
