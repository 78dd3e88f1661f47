import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson, toDate, toIso, toIsoOrNull } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import type { ContactImportDto, ImportErrorDto, ImportStatus } from '../../schemas/contact-import';
import type { ImportColumn } from './import-mapping';

// The contact_imports and contact_import_errors tables (db/migrations/20261227000400-...), and
// back: every statement the imports send is here.

export interface ImportRow {
  id: string;
  account_id: string;
  status: ImportStatus;
  file_name: string | null;
  stored_file: string;
  delimiter: ',' | ';';
  data_start: number | string;
  column_map: string;
  tags: string;
  sequence_id: string | null;
  opted_in: number | boolean;
  total_rows: number;
  processed_rows: number;
  inserted_rows: number;
  updated_rows: number;
  failed_rows: number;
  enrolled_rows: number;
  next_offset: number | string;
  next_row: number;
  error: string | null;
  lease_owner: string | null;
  lease_until: unknown;
  created_at: unknown;
  updated_at: unknown;
  started_at: unknown;
  finished_at: unknown;
}

const SELECT = 'SELECT * FROM contact_imports';

export interface NewImport {
  id: string;
  accountId: string;
  fileName: string | null;
  storedFile: string;
  delimiter: ',' | ';';
  dataStart: number;
  columns: ImportColumn[];
  tags: string[];
  sequenceId: string | null;
  optedIn: boolean;
  rows: number;
}

export async function insertImport(db: Database, input: NewImport, now: Date, transaction: Transaction): Promise<void> {
  await insertRows(
    db,
    'contact_imports',
    ['id', 'account_id', 'status', 'file_name', 'stored_file', 'delimiter', 'data_start', 'column_map', 'tags', 'sequence_id', 'opted_in', 'total_rows', 'next_offset', 'next_row', 'created_at', 'updated_at'],
    [[input.id, input.accountId, 'queued', input.fileName, input.storedFile, input.delimiter, input.dataStart, JSON.stringify(input.columns), JSON.stringify(input.tags), input.sequenceId, input.optedIn, input.rows, input.dataStart, 0, now, now]],
    transaction,
  );
}

export async function findImport(db: Database, accountId: string, id: string, transaction?: Transaction): Promise<ImportRow | undefined> {
  const [row] = await select<ImportRow>(db, `${SELECT} WHERE id = ? AND account_id = ?`, [id, accountId], transaction);
  return row;
}

// The import's row, locked for the batch's transaction: a cancel and another process's batch
// wait for it, so each sees what the other committed.
export async function lockImport(db: Database, id: string, transaction: Transaction): Promise<ImportRow | undefined> {
  const [row] = await select<ImportRow>(db, `${SELECT} WHERE id = ?${forUpdate(db)}`, [id], transaction);
  return row;
}

// The account's latest imports, newest first.
export async function listImports(db: Database, accountId: string, limit: number): Promise<ImportRow[]> {
  return select<ImportRow>(db, `${SELECT} WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, [accountId, limit]);
}

// The oldest import no live process holds: queued, or running under a lease that has ended
// (its process died), or one this process holds already. Taken by a conditional UPDATE, so two
// processes never both take it.
// only: that import alone (the command line moves the one it queued).
export async function claimImport(db: Database, owner: string, now: Date, leaseMs: number, only?: string): Promise<ImportRow | undefined> {
  const candidates = await select<{ id: string }>(
    db,
    `SELECT id FROM contact_imports WHERE (status = 'queued' OR (status = 'running' AND (lease_until < ? OR lease_owner = ?)))${only ? ' AND id = ?' : ''} ORDER BY created_at, id LIMIT 5`,
    [now, owner, ...(only ? [only] : [])],
  );
  const leaseUntil = new Date(now.getTime() + leaseMs);
  for (const { id } of candidates) {
    const taken = await execute(
      db,
      `UPDATE contact_imports SET status = 'running', lease_owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?), updated_at = ?
       WHERE id = ? AND (status = 'queued' OR (status = 'running' AND (lease_until < ? OR lease_owner = ?)))`,
      [owner, leaseUntil, now, now, id, now, owner],
    );
    if (taken > 0) {
      const [row] = await select<ImportRow>(db, `${SELECT} WHERE id = ?`, [id]);
      if (row) return row;
    }
  }
  return undefined;
}

export interface BatchProgress {
  processed: number;
  inserted: number;
  updated: number;
  failed: number;
  enrolled: number;
  nextOffset: number;
  nextRow: number;
  // Set when this batch was the file's last.
  completed: boolean;
  leaseUntil: Date;
  now: Date;
}

// The batch's counters and where the next one starts, in the batch's transaction. The file's
// last batch completes the import and lets its lease go.
export async function recordBatch(db: Database, id: string, progress: BatchProgress, transaction: Transaction): Promise<void> {
  const done = progress.completed;
  await execute(
    db,
    `UPDATE contact_imports SET processed_rows = processed_rows + ?, inserted_rows = inserted_rows + ?, updated_rows = updated_rows + ?,
       failed_rows = failed_rows + ?, enrolled_rows = enrolled_rows + ?, next_offset = ?, next_row = ?, updated_at = ?,
       status = ?, finished_at = ?, lease_until = ?${done ? ', lease_owner = NULL' : ''}
     WHERE id = ?`,
    [
      progress.processed, progress.inserted, progress.updated, progress.failed, progress.enrolled,
      progress.nextOffset, progress.nextRow, progress.now,
      done ? 'completed' : 'running', done ? progress.now : null, done ? null : progress.leaseUntil, id,
    ],
    transaction,
  );
}

export async function insertErrors(db: Database, importId: string, errors: ReadonlyArray<{ row: number; reason: string; cells: readonly string[] }>, transaction: Transaction): Promise<void> {
  if (errors.length === 0) return;
  await insertRows(db, 'contact_import_errors', ['import_id', 'row_index', 'reason', 'cells'], errors.map((e) => [importId, e.row, e.reason, JSON.stringify(e.cells)]), transaction);
}

// A final status other than completed: failed (with why) or cancelled. Only from queued or
// running: a final import stays as it ended. Answers whether it changed.
export async function endImport(
  db: Database,
  input: { id: string; accountId?: string; status: 'failed' | 'cancelled'; error?: string; now: Date },
  transaction?: Transaction,
): Promise<boolean> {
  const byAccount = input.accountId === undefined ? '' : ' AND account_id = ?';
  const changed = await execute(
    db,
    `UPDATE contact_imports SET status = ?, error = ?, finished_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL
     WHERE id = ?${byAccount} AND status IN ('queued', 'running')`,
    [input.status, input.error ?? null, input.now, input.now, input.id, ...(input.accountId === undefined ? [] : [input.accountId])],
    transaction,
  );
  return changed > 0;
}

// Rejected rows in row order, a page at a time, from after `afterRow`.
export async function errorPage(db: Database, importId: string, afterRow: number, limit: number): Promise<ImportErrorDto[]> {
  const rows = await select<{ row_index: number; reason: string; cells: string }>(
    db,
    'SELECT row_index, reason, cells FROM contact_import_errors WHERE import_id = ? AND row_index > ? ORDER BY row_index LIMIT ?',
    [importId, afterRow, limit],
  );
  return rows.map((row) => ({ row: Number(row.row_index), reason: row.reason, values: parseJson<string[]>(row.cells) }));
}

export function toImportDto(row: ImportRow): ContactImportDto {
  return {
    id: row.id,
    status: row.status,
    fileName: row.file_name,
    rows: Number(row.total_rows),
    processed: Number(row.processed_rows),
    inserted: Number(row.inserted_rows),
    updated: Number(row.updated_rows),
    failed: Number(row.failed_rows),
    enrolled: Number(row.enrolled_rows),
    columns: parseJson<ImportColumn[]>(row.column_map),
    tags: parseJson<string[]>(row.tags),
    sequenceId: row.sequence_id,
    optedIn: Boolean(Number(row.opted_in)),
    error: row.error,
    createdAt: toIso(row.created_at),
    startedAt: toIsoOrNull(row.started_at),
    finishedAt: toIsoOrNull(row.finished_at),
  };
}

export function leaseEnd(row: ImportRow): Date | null {
  return row.lease_until === null || row.lease_until === undefined ? null : toDate(row.lease_until);
}
