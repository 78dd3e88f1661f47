const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Ids are stored lower-case. A path id that is not a UUID names nothing: callers answer 404
// without asking the database.
export function normalizeId(id: string): string | null {
  return UUID.test(id) ? id.toLowerCase() : null;
}
