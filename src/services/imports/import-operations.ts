import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { NotFoundError, ValidationError } from '../../errors/app-errors';
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, type ContactImportDto, type ImportErrorDto, type ImportOptions } from '../../schemas/contact-import';
import { uniqueTags } from '../contacts/contact-state';
import { newRowId, normalizeId } from '../ids';
import { requireSequence } from '../sequences/find-sequence';
import { scanCsvFile } from './csv-file';
import { notifyImportQueued } from './import-queue';
import { resolveColumns } from './import-mapping';
import { endImport, errorPage, findImport, insertImport, listImports, toImportDto } from './import-store';

// The Contacts API's import operations (docs/api.md "Importing contacts"). The file lives in
// the imports folder (DATA_DIR/imports) from its creation until the import ends; the worker's
// task moves it (./run-import.ts).

export type ImportSource =
  // A file already in the imports folder (an upload streamed there by the HTTP layer, a copy
  // made by the command line): it is moved to the import's own name.
  | { file: string }
  // The CSV itself, for a caller that has it in hand (tRPC, a JSON body of up to 1 MiB).
  | { csv: string };

export async function createImport(
  db: Database,
  input: { accountId: string; dir: string; source: ImportSource } & ImportOptions,
): Promise<ContactImportDto> {
  const id = newRowId();
  const storedFile = `${id}.csv`;
  const target = path.join(input.dir, storedFile);
  await fs.promises.mkdir(input.dir, { recursive: true });
  if ('csv' in input.source) {
    if (Buffer.byteLength(input.source.csv) > MAX_IMPORT_BYTES) throw tooLarge();
    await fs.promises.writeFile(target, input.source.csv);
  } else await fs.promises.rename(input.source.file, target);
  try {
    const layout = await scanCsvFile(target, MAX_IMPORT_ROWS);
    const columns = resolveColumns(layout.header, input.mapping);
    const sequenceId = input.sequenceId === undefined ? null : await requireSequence(db, { accountId: input.accountId, sequenceId: input.sequenceId, mustBeActive: true });
    const now = new Date();
    await withTransaction(db, (transaction) =>
      insertImport(
        db,
        {
          id,
          accountId: input.accountId,
          fileName: input.fileName ?? null,
          storedFile,
          delimiter: layout.delimiter,
          dataStart: layout.dataStart,
          columns,
          tags: uniqueTags(input.tags ?? []),
          sequenceId,
          optedIn: input.optedIn === true,
          rows: layout.rows,
        },
        now,
        transaction,
      ),
    );
    notifyImportQueued();
    return (await getImport(db, { accountId: input.accountId, id }));
  } catch (error) {
    await removeFile(target);
    throw error;
  }
}

export function tooLarge(): ValidationError {
  const message = `The file is larger than ${MAX_IMPORT_BYTES / (1024 * 1024)} MB; split it into smaller files`;
  return new ValidationError(message, [{ path: 'file', message }]);
}

export async function getImport(db: Database, input: { accountId: string; id: string }): Promise<ContactImportDto> {
  const id = normalizeId(input.id);
  const row = id ? await findImport(db, input.accountId, id) : undefined;
  if (!row) throw new NotFoundError('Import');
  return toImportDto(row);
}

export async function listContactImports(db: Database, input: { accountId: string; limit?: number }): Promise<ContactImportDto[]> {
  return (await listImports(db, input.accountId, input.limit ?? 20)).map(toImportDto);
}

// Stops a queued or running import after the batch under way: what was committed stays. An
// import already ended is answered as it is.
export async function cancelImport(db: Database, input: { accountId: string; id: string; dir: string }): Promise<ContactImportDto> {
  const current = await getImport(db, input);
  if (await endImport(db, { id: current.id, accountId: input.accountId, status: 'cancelled', now: new Date() })) {
    const row = await findImport(db, input.accountId, current.id);
    if (row) await removeFile(path.join(input.dir, row.stored_file));
  }
  return getImport(db, input);
}

// The rejected rows, in row order, a page at a time: `after` is the last row of the page before.
export async function listImportErrors(
  db: Database,
  input: { accountId: string; id: string; after?: number; limit?: number },
): Promise<{ import: ContactImportDto; errors: ImportErrorDto[]; nextAfter: number | null }> {
  const found = await getImport(db, input);
  const limit = input.limit ?? 1000;
  const errors = await errorPage(db, found.id, input.after ?? 0, limit);
  return { import: found, errors, nextAfter: errors.length === limit ? errors[errors.length - 1]!.row : null };
}

export async function removeFile(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true });
}
