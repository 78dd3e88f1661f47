import fs from 'node:fs';
import { ValidationError } from '../../errors/app-errors';
import { CsvParser, CsvRecordTooLong, isBlank, NOT_UTF8, QUOTE, type CsvRecord } from './csv-parser';

// A CSV file on disk, read as a stream of records: a first look when an import is created (is
// it CSV at all, which delimiter, its header, how many rows), then from any committed offset
// by the import's batches. Memory stays flat whatever the file's size: one chunk and one batch.

const COMMA = 0x2c;
export const SEMICOLON = 0x3b;
const CHUNK_BYTES = 64 * 1024;

export interface CsvLayout {
  delimiter: ',' | ';';
  header: string[];
  // The byte offset of the first data row (past the BOM and the header).
  dataStart: number;
  // Data rows, blank lines left out.
  rows: number;
}

// The file's layout, or a 400 naming what is wrong with it. maxRows: more is refused.
export async function scanCsvFile(file: string, maxRows: number): Promise<CsvLayout> {
  const head = await readHead(file);
  if (head.length === 0) throw fileError('The file is empty: a CSV file starts with its header row');
  const bomLength = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  // Text has no NUL byte (UTF-16 and binary files do): not a CSV file.
  if (head.includes(0)) throw fileError('The file is not CSV text (it holds binary data; save it as CSV, UTF-8)');
  const delimiterByte = detectDelimiter(head.subarray(bomLength));
  const delimiter = delimiterByte === SEMICOLON ? ';' : ',';

  let header: CsvRecord | undefined;
  let rows = 0;
  try {
    for await (const record of readRecords(file, bomLength, delimiter)) {
      if (!header) {
        header = record;
        if (record.problem === NOT_UTF8) throw fileError('The file is not UTF-8 text (its header row); save it as CSV UTF-8');
        if (record.problem) throw fileError(`The header row is not valid CSV: ${record.problem}`);
        continue;
      }
      rows += 1;
      // One encoding for the whole file: a Latin-1 export would fail row by row otherwise.
      if (record.problem === NOT_UTF8) throw fileError(`The file is not UTF-8 text (row ${rows}); save it as CSV UTF-8`);
      if (rows > maxRows) throw fileError(`The file has more than ${maxRows.toLocaleString('en')} rows; split it into files of at most ${maxRows.toLocaleString('en')}`);
    }
  } catch (error) {
    if (error instanceof CsvRecordTooLong) throw fileError(`The file is not valid CSV: ${error.message}`);
    throw error;
  }
  if (!header) throw fileError('The file is empty: a CSV file starts with its header row');
  return { delimiter, header: header.fields.map((name) => name.trim()), dataStart: header.end, rows };
}

// Non-blank records from byte `start` on, each with its offsets in the file.
export async function* readRecords(file: string, start: number, delimiter: ',' | ';'): AsyncGenerator<CsvRecord> {
  const parser = new CsvParser(delimiter === ';' ? SEMICOLON : COMMA, start);
  const stream = fs.createReadStream(file, { start, highWaterMark: CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (const record of parser.push(chunk)) if (!isBlank(record)) yield record;
    }
    for (const record of parser.end()) if (!isBlank(record)) yield record;
  } finally {
    stream.destroy();
  }
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

// Comma or semicolon (the list separator of spreadsheets in locales with a decimal comma),
// whichever the header row has more of outside quotes; a tie is a comma.
export function detectDelimiter(head: Buffer): number {
  let commas = 0;
  let semicolons = 0;
  let inQuotes = false;
  for (const byte of head) {
    if (byte === QUOTE) inQuotes = !inQuotes;
    else if (inQuotes) continue;
    else if (byte === 0x0a || byte === 0x0d) break;
    else if (byte === COMMA) commas += 1;
    else if (byte === SEMICOLON) semicolons += 1;
  }
  return semicolons > commas ? SEMICOLON : COMMA;
}

export function fileError(message: string): ValidationError {
  return new ValidationError(message, [{ path: 'file', message }]);
}
