import type { Connection } from 'mysql2/promise';

// Index entries written per run (issue 35, item 1), counted the same way for the engine and for
// the floor: every write statement either sends is noted with the rows it changed (the server's
// OK packet), and the schema says which indexes those rows have (information_schema.STATISTICS,
// as bench/run-indexes.ts lists them, with generated columns followed back to the columns they
// are computed from, information_schema.COLUMNS).
//
// Per row: an INSERT writes an entry in every index (the clustered one, i.e. the row, and each
// secondary); an UPDATE rewrites the row and each secondary index that holds a column the
// statement SETs (or a generated column computed from one); an INSERT ... ON DUPLICATE KEY
// UPDATE counts its updated rows as an UPDATE of the columns it lists, its new rows as an INSERT;
// a DELETE removes an entry from every index. So it is an upper bound for UPDATEs that set a
// column to the value it had (InnoDB then leaves that index alone), and it does not count the
// delete-mark of an updated secondary entry separately (one entry per index and row).

interface Index {
  name: string;
  // Base columns: a generated column stands for the columns its expression reads.
  columns: Set<string>;
}

export interface TableShape {
  secondary: Index[];
}

export type Schema = Map<string, TableShape>;

export async function readSchema(admin: Connection, tables: readonly string[]): Promise<Schema> {
  const [indexRows] = (await admin.query(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS i, COLUMN_NAME AS c FROM information_schema.STATISTICS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?) AND INDEX_NAME <> 'PRIMARY' ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    [tables],
  )) as unknown as [Array<{ t: string; i: string; c: string }>];
  const [columnRows] = (await admin.query(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, GENERATION_EXPRESSION AS g FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?)`,
    [tables],
  )) as unknown as [Array<{ t: string; c: string; g: string | null }>];
  const schema: Schema = new Map(tables.map((t) => [t, { secondary: [] }]));
  const generated = new Map<string, string[]>();
  for (const row of columnRows) {
    if (!row.g) continue;
    const names = columnRows.filter((other) => other.t === row.t && other.c !== row.c && new RegExp(`\\b${other.c}\\b`).test(row.g!)).map((other) => other.c);
    generated.set(`${row.t}.${row.c}`, names);
  }
  for (const row of indexRows) {
    const shape = schema.get(row.t)!;
    let index = shape.secondary.find((candidate) => candidate.name === row.i);
    if (!index) shape.secondary.push((index = { name: row.i, columns: new Set() }));
    for (const column of generated.get(`${row.t}.${row.c}`) ?? [row.c]) index.columns.add(column);
  }
  return schema;
}

interface Write {
  table: string;
  kind: 'insert' | 'update' | 'delete';
  // UPDATE: the columns set; upsert: the columns of its UPDATE part.
  columns: string[];
  // INSERT: the rows in VALUES (an INSERT ... SELECT: unknown, the affected rows are used).
  tuples?: number;
  upsert: boolean;
}

const parsed = new Map<string, Write | null>();

function parse(sql: string): Write | null {
  const cached = parsed.get(sql);
  if (cached !== undefined) return cached;
  const text = sql.replace(/^Executing \([^)]*\): /, '').replace(/`/g, '').replace(/\s+/g, ' ').trim();
  let write: Write | null = null;
  const insert = /^INSERT (?:IGNORE )?INTO (\w+) ?\(([^)]*)\) ?(VALUES .*?|SELECT .*?)(?: ON DUPLICATE KEY UPDATE (.*))?$/i.exec(text);
  const update = /^UPDATE (\w+)(?: (?:AS )?\w+)? SET (.*?)(?: WHERE .*)?$/i.exec(text);
  const remove = /^DELETE FROM (\w+)/i.exec(text);
  if (insert) {
    const values = insert[3]!;
    write = {
      table: insert[1]!,
      kind: 'insert',
      columns: insert[4] ? assignedColumns(insert[4]) : [],
      tuples: /^VALUES/i.test(values) ? values.split(/\)\s*,\s*\(/).length : undefined,
      upsert: Boolean(insert[4]),
    };
  } else if (update) {
    write = { table: update[1]!, kind: 'update', columns: assignedColumns(update[2]!), upsert: false };
  } else if (remove) {
    write = { table: remove[1]!, kind: 'delete', columns: [], upsert: false };
  }
  if (parsed.size > 5000) parsed.clear();
  parsed.set(sql, write);
  return write;
}

// `a = ?, b = CASE ... END, c = VALUES(c)`: the names left of each top-level `=`.
function assignedColumns(clause: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= clause.length; i++) {
    const ch = clause[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if ((ch === ',' && depth === 0) || i === clause.length) {
      const name = /^\s*(?:\w+\.)?(\w+)\s*=/.exec(clause.slice(start, i));
      if (name) names.push(name[1]!);
      start = i + 1;
    }
  }
  return names;
}

// The rows a write changed, from what the driver answered: a number (the data layer's direct
// statements), or an OK packet (mysql2's ResultSetHeader), possibly inside Sequelize's pair.
export function affectedRowsOf(result: unknown): number | undefined {
  if (typeof result === 'number') return result;
  if (Array.isArray(result)) {
    for (const part of result) {
      const found = affectedRowsOf(part);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (result && typeof result === 'object' && 'affectedRows' in result) return Number((result as { affectedRows: unknown }).affectedRows);
  return undefined;
}

export class WriteTally {
  // By table: rows written and index entries.
  readonly byTable = new Map<string, { statements: number; rows: number; entries: number }>();
  unknownRows = 0;
  constructor(private readonly schema: Schema) {}

  reset(): void {
    this.byTable.clear();
    this.unknownRows = 0;
  }

  record(sql: string, result: unknown): void {
    const write = parse(sql);
    if (!write) return;
    const shape = this.schema.get(write.table);
    if (!shape) return;
    const affected = affectedRowsOf(result);
    if (affected === undefined) {
      this.unknownRows += 1;
      return;
    }
    const all = 1 + shape.secondary.length;
    const touched = (columns: string[]) => 1 + shape.secondary.filter((index) => columns.some((c) => index.columns.has(c))).length;
    let rows = affected;
    let entries: number;
    if (write.kind === 'insert' && write.upsert) {
      // MySQL answers 1 per new row and 2 per updated row (0 for a row left as it was).
      const tuples = write.tuples ?? affected;
      const updated = Math.max(0, Math.min(tuples, affected - tuples));
      const inserted = Math.max(0, affected - 2 * updated);
      rows = updated + inserted;
      entries = inserted * all + updated * touched(write.columns);
    } else if (write.kind === 'insert' || write.kind === 'delete') {
      entries = affected * all;
    } else {
      entries = affected * touched(write.columns);
    }
    const entry = this.byTable.get(write.table) ?? { statements: 0, rows: 0, entries: 0 };
    entry.statements += 1;
    entry.rows += rows;
    entry.entries += entries;
    this.byTable.set(write.table, entry);
  }

  get entries(): number {
    return [...this.byTable.values()].reduce((sum, t) => sum + t.entries, 0);
  }

  // "sequence_runs 2.0 rows, 9.0 entries; ..." per run.
  describe(runs: number): string {
    const figure = (value: number) => (value >= 0.1 || value === 0 ? value.toFixed(2) : value.toPrecision(2));
    const parts = [...this.byTable]
      .sort((a, b) => b[1].entries - a[1].entries)
      .map(([t, n]) => `${t} ${figure(n.rows / runs)} rows, ${figure(n.entries / runs)} entries`);
    if (this.unknownRows > 0) parts.push(`${this.unknownRows} writes whose rows the driver did not say (not counted)`);
    return parts.join('; ');
  }
}

// The tables the engine writes in a step's transactions (those of the current schema): every
// base table of the database except the benchmark's own.
export async function productTables(admin: Connection): Promise<string[]> {
  const [rows] = (await admin.query(
    "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME NOT LIKE 'floor\\_%' AND TABLE_NAME NOT LIKE 'bench\\_%'",
  )) as unknown as [Array<{ t: string }>];
  return rows.map((row) => row.t);
}
