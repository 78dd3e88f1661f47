import type { Connection } from 'mysql2/promise';
import { statementShape } from './general-log';
import { EMAIL_PREFIX_LENGTH } from '../../src/services/contacts/contact-email-prefixes';

// EXPLAIN of statements as a server sent them (values inline, from the general log): which
// index each table is read through, and whether any read is a full scan.

export interface ExplainedStatement {
  shape: string;
  rows: ExplainRow[];
  verdict: string;
}

export interface ExplainRow {
  table: string | null;
  type: string | null;
  key: string | null;
  rows: number | null;
  extra: string | null;
}

const TRANSACTION_CONTROL = /^\s*(START TRANSACTION|COMMIT|ROLLBACK|SET\s)/i;

export async function explainAll(admin: Connection, statements: readonly string[]): Promise<ExplainedStatement[]> {
  const seen = new Set<string>();
  const explained: ExplainedStatement[] = [];
  for (const sql of statements) {
    if (TRANSACTION_CONTROL.test(sql)) continue;
    const shape = statementShape(sql);
    if (seen.has(shape)) continue;
    seen.add(shape);
    // MariaDB sometimes logs an Execute without its values: that cannot be explained.
    const withoutValues = /\?/.test(sql.replace(/'(?:[^'\\]|\\.|'')*'/g, ''));
    const rows = withoutValues ? [] : await explain(admin, sql);
    // EXPLAIN INSERT names the target table with type ALL, but nothing is read: the unique
    // keys are probed by the insert itself.
    const verdict = /^\s*INSERT\b/i.test(sql)
      ? 'insert (reads nothing; unique keys probed)'
      : withoutValues
        ? 'logged without its values: not explained'
        : verdictOf(shape, rows);
    explained.push({ shape, rows, verdict });
  }
  return explained;
}

async function explain(admin: Connection, sql: string): Promise<ExplainRow[]> {
  let result: unknown;
  try {
    [result] = await admin.query(`EXPLAIN ${sql}`);
  } catch (error) {
    throw new Error(`EXPLAIN failed (${(error as Error).message}) for: ${sql.slice(0, 500)}`);
  }
  return (result as Array<Record<string, unknown>>).map((row) => ({
    table: (row.table as string | null) ?? null,
    type: (row.type as string | null) ?? null,
    key: (row.key as string | null) ?? null,
    rows: row.rows === null || row.rows === undefined ? null : Number(row.rows),
    extra: (row.Extra as string | null) ?? null,
  }));
}
// Tables with several rows per contact by design: a read of n contacts' rows expects n times
// as many (contact_email_prefixes: one row per prefix length of each email).
function rowsPerKey(table: string | null): number {
  return table === 'contact_email_prefixes' ? EMAIL_PREFIX_LENGTH : 1;
}

// A full scan (type ALL, or index: the whole index), or an index read that expects far more
// rows than the statement names (a prefix that picks the whole account, say): both grow with
// the table.
function verdictOf(shape: string, rows: readonly ExplainRow[]): string {
  const scans = rows.filter((row) => row.type === 'ALL' || row.type === 'index');
  if (scans.length > 0) return `FULL SCAN of ${scans.map((row) => `${row.table} (${row.type})`).join(', ')}`;
  const named = Math.max(1, ...Array.from(shape.matchAll(/IN \(\?×(\d+)\)/g), (m) => Number(m[1])));
  const wide = rows.filter((row) => row.rows !== null && row.rows > 2 * named * rowsPerKey(row.table) + 10);
  if (wide.length > 0) {
    return `WIDE READ: ${wide.map((row) => `${row.table} ~${row.rows} rows through ${row.key ?? 'no key'} (${row.type})`).join(', ')} for ${named} named`;
  }
  const keys = rows.filter((row) => row.key).map((row) => `${row.table}.${row.key} (${row.type})`);
  return keys.length > 0 ? keys.join(', ') : rows.map((row) => row.extra ?? '?').join(', ');
}
