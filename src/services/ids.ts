import { v7 as uuidv7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Ids are stored lower-case. A path id that is not a UUID names nothing: callers answer 404
// without asking the database.
export function normalizeId(id: string): string | null {
  return UUID.test(id) ? id.toLowerCase() : null;
}

// The id of a new row in a table that grows with the account and is read page by page:
// contacts, runs, events, deliveries. A UUIDv7 (RFC 9562): it starts with its creation time,
// so the primary key (InnoDB's clustered index, the rows themselves) keeps rows made together
// side by side. A list page reads its 51 rows through an index and then by primary key: with
// random (v4) ids those 51 reads land on 51 pages spread over the whole table, and a page cost
// 0.3 ms more in a table of a million contacts than in one of ten thousand (bench:lists; the
// same query, same index). With v7 ids a page's rows share a few pages, at any table size.
// The ids stay opaque UUIDs to clients; the creation time they carry is the row's createdAt,
// which the API shows anyway. Secrets (tokens, keys) never use this.
export function newRowId(): string {
  return uuidv7();
}
