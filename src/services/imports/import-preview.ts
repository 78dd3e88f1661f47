import { CsvParser, CsvRecordTooLong, isBlank, NOT_UTF8, type CsvRecord } from './csv-parser';
import { detectDelimiter, fileError, SEMICOLON } from './csv-file';
import { defaultField } from './import-mapping';

// The dashboard's first look at a file before it is sent: the header, the field each column
// would fill by default (the API's own defaults) and the first rows, read by the import's own
// parser from the file's first bytes. Nothing is stored.

export const PREVIEW_ROWS = 5;
export const PREVIEW_BYTES = 64 * 1024;

export interface ImportPreview {
  delimiter: ',' | ';';
  columns: Array<{ header: string; field: string | null }>;
  rows: string[][];
}

// `complete`: the text is the whole file, so a last row without a line end counts; otherwise
// the text is a head cut anywhere, and a row it cuts is left out.
export function previewCsv(input: { text: string; complete: boolean }): ImportPreview {
  const bytes = Buffer.from(input.text.replace(/^\uFEFF/, ''), 'utf8');
  if (bytes.length === 0) throw fileError('The file is empty: a CSV file starts with its header row');
  if (bytes.includes(0)) throw fileError('The file is not CSV text (it holds binary data; save it as CSV, UTF-8)');
  const delimiterByte = detectDelimiter(bytes);
  const parser = new CsvParser(delimiterByte, 0);
  let records: CsvRecord[];
  try {
    records = parser.push(bytes);
    if (input.complete) records.push(...parser.end());
  } catch (error) {
    if (error instanceof CsvRecordTooLong) throw fileError(`The file is not valid CSV: ${error.message}`);
    throw error;
  }
  records = records.filter((record) => !isBlank(record));
  const [header, ...rows] = records;
  if (!header) throw fileError('The first row is longer than the preview can show; is this a CSV file?');
  if (header.problem === NOT_UTF8) throw fileError('The file is not UTF-8 text (its header row); save it as CSV UTF-8');
  if (header.problem) throw fileError(`The header row is not valid CSV: ${header.problem}`);
  const names = header.fields.map((name) => name.trim());
  return {
    delimiter: delimiterByte === SEMICOLON ? ';' : ',',
    columns: names.map((name) => ({ header: name, field: defaultField(name) })),
    rows: rows.slice(0, PREVIEW_ROWS).map((record) => record.fields),
  };
}
