import { expect } from 'chai';
import { CsvParser, CsvRecordTooLong, csvLine, type CsvRecord } from '../../../src/services/imports/csv-parser';

// The hand-written RFC 4180 reader (src/services/imports/csv-parser.ts): what it reads, where each
// record ends in bytes (an import resumes there), and that a chunk boundary anywhere changes nothing.

const COMMA = 0x2c;
const SEMICOLON = 0x3b;

function parse(text: string | Buffer, delimiter = COMMA, chunkSize?: number): CsvRecord[] {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const parser = new CsvParser(delimiter);
  const records: CsvRecord[] = [];
  const size = chunkSize ?? bytes.length;
  for (let i = 0; i < bytes.length; i += size) records.push(...parser.push(bytes.subarray(i, i + size)));
  if (bytes.length === 0) records.push(...parser.push(bytes));
  records.push(...parser.end());
  return records;
}

const fields = (records: CsvRecord[]) => records.map((r) => r.fields);

describe('CSV parser', () => {
  it('reads fields, quoted fields with delimiters, doubled quotes and line breaks', () => {
    const text = 'email,name,note\r\nada@example.com,"Lovelace, Ada","said ""hi""\nthen left"\r\nbob@example.com,Bob,\n';
    expect(fields(parse(text))).to.deep.equal([
      ['email', 'name', 'note'],
      ['ada@example.com', 'Lovelace, Ada', 'said "hi"\nthen left'],
      ['bob@example.com', 'Bob', ''],
    ]);
  });

  it('gives each record the byte offsets where it starts and where the next one does', () => {
    const text = 'a,b\r\né,"x\r\ny"\nlast,1';
    const records = parse(text);
    const bytes = Buffer.from(text);
    for (const record of records) {
      const again = parse(bytes.subarray(record.start, record.end))[0]!;
      expect(again.fields).to.deep.equal(record.fields);
    }
    expect(records.map((r) => [r.start, r.end])).to.deep.equal([[0, 5], [5, 15], [15, 21]]);
  });

  it('reads the same records whatever the chunk size (quotes, CRLF and UTF-8 cut anywhere)', () => {
    const text = 'email;name\r\n"a;b@x.io";"Zoë ""Z"""\r\n\r\nc@x.io;Łukasz\r\n';
    const whole = parse(text, SEMICOLON);
    for (let size = 1; size <= 8; size++) expect(parse(text, SEMICOLON, size), `chunk ${size}`).to.deep.equal(whole);
    expect(fields(whole)).to.deep.equal([['email', 'name'], ['a;b@x.io', 'Zoë "Z"'], [''], ['c@x.io', 'Łukasz']]);
  });

  it('marks a record with text after a closing quote, an unclosed quote, or bytes that are not UTF-8', () => {
    expect(parse('"a"b,c\n')[0]!.problem).to.match(/after a closing quote/);
    expect(parse('a,"b\n')[0]!.problem).to.match(/not closed/);
    expect(parse(Buffer.from([0x61, 0x2c, 0xe9, 0x0a]))[0]!.problem).to.equal('Not UTF-8 text');
  });

  it('takes a quote inside an unquoted field literally, and a lone CR as a line end', () => {
    expect(fields(parse('5" disk,x\ry,z'))).to.deep.equal([['5" disk', 'x'], ['y', 'z']]);
  });

  it('refuses a record longer than its limit (an unclosed quote swallowing the file)', () => {
    const parser = new CsvParser(COMMA, 0, 100);
    expect(() => parser.push(Buffer.from(`"${'x'.repeat(200)}`))).to.throw(CsvRecordTooLong);
  });

  it('writes CSV that reads back, and keeps spreadsheet formulas from running', () => {
    const line = csvLine(['3', 'a, "b"', '=HYPERLINK("x")', 'plain']);
    expect(line).to.equal('3,"a, ""b""","\'=HYPERLINK(""x"")",plain\r\n');
    expect(parse(line)[0]!.fields).to.deep.equal(['3', 'a, "b"', '\'=HYPERLINK("x")', 'plain']);
  });
});
