import path from 'node:path';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { AppError, ValidationError } from '../../errors/app-errors';
import type { NewEventOf } from '../../schemas/event';
import type { UpsertItem } from '../contacts/contact-state';
import { upsertContacts } from '../contacts/upsert-contacts';
import { recordEvents } from '../events/record-events';
import { notifyDueWork } from '../runs/due-work';
import { enrollInTransaction } from '../sequences/enroll-by-ids';
import { CsvRecordTooLong } from './csv-parser';
import { readRecords } from './csv-file';
import { rowToItem, type ImportColumn } from './import-mapping';
import { claimImport, endImport, insertErrors, lockImport, recordBatch, type ImportRow } from './import-store';
import { removeFile } from './import-operations';
import { parseJson } from '../../db/sql/rows';

// Moves contact imports, a batch per transaction (docs/api.md "Importing contacts"):
//   claim the oldest import no live process holds (a lease, so a crashed process's import is
//   taken over once its lease ends), read the file from its committed offset, and per batch, in
//   one transaction: lock the import's row (a cancel, or a process that took the import over,
//   is seen there and the batch is dropped), upsert the batch's contacts with the batch upsert's
//   merge rules, enroll them, list the rejected rows, and write the counters and the offset past
//   the batch. A batch either commits whole, offset included, or not at all: a resumed import
//   applies no row twice.

export interface ImportRunSettings {
  // DATA_DIR/imports.
  dir: string;
  // Names this process's leases.
  owner: string;
  batchSize: number;
  leaseMs: number;
  // Batches per call; more goes on in the next one (the import's lease is kept meanwhile).
  maxBatches: number;
  // The database's time (src/db/sql/clock.ts), through the task's timers.
  now: () => Promise<Date>;
  // Only this import (the command line's); absent: any.
  only?: string;
}

export const DEFAULT_IMPORT_RUN = { batchSize: 500, leaseMs: 60_000, maxBatches: 20 };

// Ends the pass without committing the batch: another process holds the import, or it ended.
class ImportLost extends Error {}

// One call: a claimed import moved by up to maxBatches batches. Answers whether work is left
// (this import's rest, or another import).
export async function runImports(db: Database, settings: ImportRunSettings, shouldStop: () => boolean = () => false): Promise<boolean> {
  const claimed = await claimImport(db, settings.owner, await settings.now(), settings.leaseMs, settings.only);
  if (!claimed) return false;
  try {
    await moveImport(db, settings, claimed, shouldStop);
  } catch (error) {
    if (error instanceof ImportLost) return true;
    // The file is gone, or unreadable past some row: the import ends, its committed rows stay.
    const reason = failureReason(error);
    if (reason === undefined) throw error;
    await endImport(db, { id: claimed.id, status: 'failed', error: reason, now: await settings.now() });
    await removeFile(path.join(settings.dir, claimed.stored_file));
  }
  return true;
}

async function moveImport(db: Database, settings: ImportRunSettings, row: ImportRow, shouldStop: () => boolean): Promise<void> {
  const columns = parseJson<ImportColumn[]>(row.column_map);
  const options = { addTags: parseJson<string[]>(row.tags), optedIn: Boolean(Number(row.opted_in)) };
  const file = path.join(settings.dir, row.stored_file);
  const records = readRecords(file, Number(row.next_offset), row.delimiter)[Symbol.asyncIterator]();
  let nextRow = Number(row.next_row);
  let nextOffset = Number(row.next_offset);
  let lookahead = await records.next();
  // The next batch, read and checked while the one before commits: the file and the rules run
  // on this process's CPU while the database works on the batch.
  const readBatch = async (): Promise<Batch> => {
    const batch: Batch = { rejected: [], accepted: [], rows: 0, nextOffset, nextRow, last: false };
    while (!lookahead.done && batch.rows < settings.batchSize) {
      const record = lookahead.value;
      nextRow += 1;
      batch.rows += 1;
      const outcome = rowToItem(record.fields, columns, options, record.problem);
      if ('item' in outcome) batch.accepted.push({ row: nextRow, cells: record.fields, item: outcome.item });
      else batch.rejected.push({ row: nextRow, reason: outcome.reason, cells: record.fields });
      nextOffset = record.end;
      lookahead = await records.next();
    }
    return { ...batch, nextOffset, nextRow, last: lookahead.done === true };
  };
  try {
    let next: Promise<Batch> | undefined = readBatch();
    for (let batches = 0; next && batches < settings.maxBatches && !shouldStop(); batches++) {
      const batch: Batch = await next;
      next = batch.last || batches + 1 >= settings.maxBatches ? undefined : readBatch();
      // A read ahead that fails is the next batch's failure, not this one's.
      next?.catch(() => undefined);
      await commitBatch(db, settings, row, batch);
      if (batch.last) {
        await removeFile(file);
        return;
      }
    }
    await next;
  } finally {
    await records.return?.(undefined);
  }
}

interface Batch {
  rejected: Array<{ row: number; reason: string; cells: string[] }>;
  accepted: Array<{ row: number; cells: string[]; item: UpsertItem }>;
  rows: number;
  nextOffset: number;
  nextRow: number;
  last: boolean;
}

async function commitBatch(db: Database, settings: ImportRunSettings, row: ImportRow, input: Batch): Promise<void> {
  const rejected = [...input.rejected];
  let accepted = input.accepted;
  const now = await settings.now();
  // A row the merge would take past a contact's limits (tags, custom fields) fails the whole
  // upsert: it is moved to the rejected rows and the batch tried again, without it.
  for (;;) {
    try {
      const due = await withTransaction(db, async (transaction) => {
        const current = await lockImport(db, row.id, transaction);
        if (!current || current.status !== 'running' || current.lease_owner !== settings.owner) throw new ImportLost();
        const upserted = accepted.length > 0 ? await upsertContacts(db, row.account_id, accepted.map((a) => a.item), transaction) : undefined;
        const events: NewEventOf[] = upserted?.events ?? [];
        let enrolled = 0;
        let due = false;
        if (row.sequence_id && upserted) {
          const ids = [...new Set(upserted.results.map((result) => result.contact.id))];
          const enrollment = await enrollInTransaction(db, { accountId: row.account_id, sequenceId: row.sequence_id, ids }, transaction);
          enrolled = enrollment.started.size;
          due = enrollment.due;
          events.push(...enrollment.events);
        }
        await recordEvents(db, row.account_id, events, transaction);
        await insertErrors(db, row.id, rejected, transaction);
        await recordBatch(db, row.id, {
          processed: input.rows,
          inserted: upserted?.inserted ?? 0,
          updated: upserted?.updated ?? 0,
          failed: rejected.length,
          enrolled,
          nextOffset: input.nextOffset,
          nextRow: input.nextRow,
          completed: input.last,
          leaseUntil: new Date(now.getTime() + settings.leaseMs),
          now,
        }, transaction);
        return due;
      });
      if (due) notifyDueWork();
      return;
    } catch (error) {
      const index = itemAtFault(error, accepted.length);
      if (index === undefined) throw error;
      const [bad] = accepted.splice(index, 1);
      rejected.push({ row: bad!.row, reason: (error as ValidationError).details[0]?.message ?? (error as Error).message, cells: bad!.cells });
      rejected.sort((a, b) => a.row - b.row);
      accepted = [...accepted];
    }
  }
}

// The item a limit error is about: `contacts.N.tags` in a batch of more than one, else the one.
function itemAtFault(error: unknown, count: number): number | undefined {
  if (!(error instanceof ValidationError)) return undefined;
  if (count === 1) return 0;
  const match = /^contacts\.(\d+)\./.exec(error.details[0]?.path ?? '');
  return match ? Number(match[1]) : undefined;
}

function failureReason(error: unknown): string | undefined {
  if (error instanceof CsvRecordTooLong) return error.message;
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'The import\'s file is gone from the imports folder (DATA_DIR/imports)';
  // The sequence to enroll into was paused, archived or deleted meanwhile.
  if (error instanceof AppError && error.status < 500) return `Stopped: ${error.message}`;
  return undefined;
}
