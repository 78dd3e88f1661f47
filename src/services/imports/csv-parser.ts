import { isUtf8 } from 'node:buffer';

// A streaming RFC 4180 reader over bytes. It works on bytes, not text, so that every record
// carries the byte offset where the next one starts: an import commits that offset with each
// batch, and a resumed import reads on from it (src/services/imports/run-import.ts). The
// delimiter, the quote and CR/LF are ASCII, and no byte of a multi-byte UTF-8 character is
// ASCII, so splitting bytes is safe; each field is decoded as UTF-8 once complete.
//
// What it accepts beyond the RFC, as spreadsheets write it: LF or CRLF (or a lone CR) line ends,
// a last record without a line end, and a quote inside an unquoted field taken literally. A
// character after a closing quote other than the delimiter or a line end makes the record
// malformed: it is still returned (with `problem`), so the caller can list it and go on.

export const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

export interface CsvRecord {
  fields: string[];
  // Byte offsets in the file: where this record starts, and where the next one does.
  start: number;
  end: number;
  // Set when the record breaks the format; fields hold what could be read.
  problem?: string;
}

export class CsvRecordTooLong extends Error {
  constructor(readonly offset: number, limit: number) {
    super(`A row starting at byte ${offset} is longer than ${limit} bytes (an unclosed quote?)`);
  }
}

export const NOT_UTF8 = 'Not UTF-8 text';

export class CsvParser {
  private fields: string[] = [];
  // The bytes of the field being read, across chunks.
  private field: Buffer[] = [];
  private fieldLength = 0;
  private inQuotes = false;
  // Just read a quote inside a quoted field: either the closing one or the first of a pair.
  private quoteSeen = false;
  // The field began with a quote (so its content is between quotes).
  private quoted = false;
  private afterClose = false;
  private problem: string | undefined;
  // A CR ended the chunk and the record (its fields are read): an LF next belongs to the same
  // line end.
  private pendingCr = false;
  private recordStart: number;
  private offset: number;
  private recordBytes = 0;

  constructor(
    private readonly delimiter: number,
    // Where the first byte pushed sits in the file.
    start = 0,
    private readonly maxRecordBytes = 1024 * 1024,
  ) {
    this.recordStart = start;
    this.offset = start;
  }

  // The records the chunk completes (a record cut by the chunk's end waits for the next one).
  push(chunk: Buffer): CsvRecord[] {
    const records: CsvRecord[] = [];
    const delimiter = this.delimiter;
    let i = 0;
    const n = chunk.length;
    if (this.pendingCr && n > 0) {
      // The record ended with the last chunk's CR: with this LF, or at the CR.
      this.pendingCr = false;
      if (chunk[0] === LF) i = 1;
      records.push(this.endRecord(this.offset + i));
    }
    // Bytes of the current field not yet copied, from chunk[runStart] to chunk[i].
    let runStart = i;
    for (; i < n; i++) {
      const byte = chunk[i]!;
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (byte === QUOTE) {
            // "" inside quotes: one quote; the first of the pair was left out of the run.
            runStart = i;
            continue;
          }
          this.inQuotes = false;
          this.afterClose = true;
          // Fall through: this byte is read as outside quotes.
        } else {
          if (byte === QUOTE) {
            this.take(chunk, runStart, i);
            this.quoteSeen = true;
            runStart = i + 1;
          }
          continue;
        }
      }
      if (byte === delimiter) {
        this.take(chunk, runStart, i);
        this.endField();
        runStart = i + 1;
      } else if (byte === LF || byte === CR) {
        this.take(chunk, runStart, i);
        this.endField();
        // CRLF is one line end; a CR at the chunk's end may be followed by the next chunk's LF,
        // so its record waits for that chunk (its end offset depends on it).
        if (byte === CR && i + 1 === n) {
          this.pendingCr = true;
          runStart = n;
          continue;
        }
        if (byte === CR && chunk[i + 1] === LF) i += 1;
        records.push(this.endRecord(this.offset + i + 1));
        runStart = i + 1;
      } else if (this.afterClose) {
        this.problem ??= 'Text after a closing quote; a quote inside a quoted field is written twice ("")';
        this.afterClose = false;
      } else if (byte === QUOTE && this.fieldLength === 0 && i === runStart && !this.quoted) {
        this.inQuotes = true;
        this.quoted = true;
        runStart = i + 1;
      }
    }
    this.take(chunk, runStart, n);
    this.offset += n;
    this.recordBytes = this.offset - this.recordStart;
    if (this.recordBytes > this.maxRecordBytes) throw new CsvRecordTooLong(this.recordStart, this.maxRecordBytes);
    return records;
  }

  // The file's end: a last record without a line end.
  end(): CsvRecord[] {
    if (this.pendingCr) {
      this.pendingCr = false;
      return [this.endRecord(this.offset)];
    }
    if (this.inQuotes && !this.quoteSeen) {
      this.problem ??= 'A quoted field is not closed before the end of the file';
    }
    this.inQuotes = false;
    if (this.fields.length === 0 && this.fieldLength === 0 && !this.quoted) return [];
    this.endField();
    return [this.endRecord(this.offset)];
  }

  private take(chunk: Buffer, from: number, to: number) {
    if (to <= from) return;
    this.field.push(chunk.subarray(from, to));
    this.fieldLength += to - from;
    if (this.offset + to - this.recordStart > this.maxRecordBytes) throw new CsvRecordTooLong(this.recordStart, this.maxRecordBytes);
  }

  private endField() {
    const bytes = this.field.length === 1 ? this.field[0]! : Buffer.concat(this.field, this.fieldLength);
    const value = this.fieldLength === 0 ? '' : bytes.toString('utf8');
    // Invalid UTF-8 decodes to U+FFFD; only then is the field checked byte by byte (the text may
    // hold a real U+FFFD).
    if (value.includes('\uFFFD') && !isUtf8(bytes)) this.problem ??= NOT_UTF8;
    this.fields.push(value);
    this.field = [];
    this.fieldLength = 0;
    this.quoted = false;
    this.afterClose = false;
    this.quoteSeen = false;
  }

  private endRecord(end: number): CsvRecord {
    const record: CsvRecord = { fields: this.fields, start: this.recordStart, end };
    if (this.problem) record.problem = this.problem;
    this.fields = [];
    this.problem = undefined;
    this.recordStart = end;
    return record;
  }
}

// A record that is one empty field: a blank line, skipped (neither a row nor an error).
export function isBlank(record: CsvRecord): boolean {
  return record.fields.length === 1 && record.fields[0] === '' && !record.problem;
}

// One line of CSV (RFC 4180, CRLF), quoting what needs it: for the errors file.
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

function csvField(value: string): string {
  return /[",\r\n;]/.test(value) || /^[=+\-@\t]/.test(value) ? `"${neutralise(value).replace(/"/g, '""')}"` : value;
}

// A cell starting with =, +, - or @ is a formula to a spreadsheet: the errors file is opened
// in one, with rows a stranger may have written, so such a cell is shown as text.
function neutralise(value: string): string {
  return /^[=+\-@\t]/.test(value) ? `'${value}` : value;
}
