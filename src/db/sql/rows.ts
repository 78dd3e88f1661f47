// Raw rows come back differently per dialect: SQLite gives dates and JSON as text
// ('2026-11-21 09:30:00.000 +00:00', '{"a":1}'), mysql2 gives Date objects and, on MariaDB
// (JSON is LONGTEXT there), text as well. These read either form.

export function toDate(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'string') {
    // 'YYYY-MM-DD HH:MM:SS.mmm +00:00' (SQLite) or 'YYYY-MM-DD HH:MM:SS.mmm' (UTC, MySQL)
    const iso = value.replace(' ', 'T').replace(/ ?\+00:00$/, '');
    return new Date(iso.endsWith('Z') ? iso : `${iso}Z`);
  }
  throw new TypeError(`Not a date: ${String(value)}`);
}

export function toIso(value: unknown): string {
  return toDate(value).toISOString();
}

export function toIsoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : toIso(value);
}

export function parseJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
