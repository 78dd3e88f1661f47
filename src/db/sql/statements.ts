import type { Transaction } from 'sequelize';
import type { Database } from '../database';
import { directStatementOptions } from '../direct-statements';
import { orUnavailable } from './unavailable';
import { writeOutsideTransaction } from './transaction';
import { assertBeforeWriteDeadline } from './write-deadline';

// Every raw statement goes through here: values are bound the same way on both dialects, and
// the few statements whose syntax differs between SQLite and MySQL/MariaDB are written once.
// (MariaDB rejects MySQL 8's `AS new` row alias, so VALUES(col) it is.)

type Row = readonly unknown[];

// INSERT of rows, followed by `onConflict` (what to do with a row that clashes with a unique
// index). Nothing to insert, nothing sent. Answers the number of rows the statements changed.
// Rows past MAX_BOUND_VALUES go in further statements, in their order (a lock order kept).
async function insert(
  db: Database,
  table: string,
  columns: readonly string[],
  rows: readonly Row[],
  onConflict: string,
  transaction: Transaction,
): Promise<number> {
  const perStatement = Math.max(1, Math.floor(MAX_BOUND_VALUES / columns.length));
  let changed = 0;
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = start === 0 && rows.length <= perStatement ? rows : rows.slice(start, start + perStatement);
    changed += await execute(db, insertStatement(table, columns, chunk.length, onConflict), flatten(chunk, columns.length), transaction);
  }
  return changed;
}

// The rows' values in one list. Array.prototype.flat takes V8's generic path (about 12 ms for an
// import batch's 8,000 mirror rows; this loop, 1 ms).
function flatten(rows: readonly Row[], width: number): unknown[] {
  const values = new Array<unknown>(rows.length * width);
  let at = 0;
  for (const row of rows) {
    if (row.length !== width) throw new Error(`a row of ${row.length} values for ${width} columns`);
    for (let i = 0; i < width; i++) values[at++] = row[i];
  }
  return values;
}

// Bound values one statement may carry: SQLite's limit (SQLITE_MAX_VARIABLE_NUMBER, 32,766
// since 3.32); MariaDB's and MySQL's prepared statements take 65,535. An import batch's mirror
// rows (up to 100 tags a contact) go past it.
const MAX_BOUND_VALUES = 32_766;

function insertStatement(table: string, columns: readonly string[], count: number, onConflict: string): string {
  const key = `${table}\n${columns.join()}\n${count}\n${onConflict}`;
  let sql = insertStatements.get(key);
  if (sql === undefined) {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: count }, () => tuple).join(', ')}${onConflict}`;
    // A handful of tables and row counts up to a request's limit: bounded, but kept so anyway.
    if (insertStatements.size >= 1000) insertStatements.clear();
    insertStatements.set(key, sql);
  }
  return sql;
}

// The text of each INSERT shape, made once.
const insertStatements = new Map<string, string>();

// A statement that returns no rows (UPDATE, DELETE, INSERT without a read-back); answers the
// number of rows it changed. Values are bound, never written into the text
// (src/db/direct-statements.ts). An array value is a list: `id IN (?)` with `[ids]` binds one
// placeholder per id (an empty list matches nothing), here and in select().
export async function execute(
  db: Database,
  sql: string,
  values: readonly unknown[],
  transaction?: Transaction,
): Promise<number> {
  // No transaction: the statement commits on its own, so a request past its deadline does not
  // send it (./write-deadline.ts); on SQLite, through the one writer queue still
  // (src/db/sql/transaction.ts).
  if (!transaction) assertBeforeWriteDeadline();
  if (!transaction && db.dialect === 'sqlite') return writeOutsideTransaction(db, (joined) => execute(db, sql, values, joined));
  return orUnavailable(
    async () => (await db.sequelize.query(sql, directStatementOptions({ values, returnsRows: false }, transaction))) as unknown as number,
  );
}

// A write on MySQL, answered with what the server's OK packet says: the rows it changed, and
// LAST_INSERT_ID as the statement left it (the counter idiom of src/services/events). MySQL only.
export async function executeForInsertId(
  db: Database,
  sql: string,
  values: readonly unknown[],
  transaction: Transaction,
): Promise<{ affectedRows: number; insertId: number }> {
  if (db.dialect !== 'mysql') throw new Error('executeForInsertId is for MySQL');
  const header = await orUnavailable(
    async () =>
      (await db.sequelize.query(sql, directStatementOptions({ values, returnsRows: true }, transaction))) as unknown as {
        affectedRows: number;
        insertId: number | string;
      },
  );
  return { affectedRows: header.affectedRows, insertId: Number(header.insertId) };
}

// A multi-row INSERT; a unique-index clash fails it (UniqueConstraintError).
export async function insertRows(
  db: Database,
  table: string,
  columns: readonly string[],
  rows: readonly Row[],
  transaction: Transaction,
): Promise<void> {
  await insert(db, table, columns, rows, '', transaction);
}

// INSERT that leaves alone any row clashing with a unique index (and, on MySQL, locks it).
// Answers the number of rows it inserted: SQLite counts no row it left alone, nor does MySQL,
// whose `id = id` changes nothing and whose connections (Sequelize's, which turns
// CLIENT_FOUND_ROWS off) count changed rows, not found ones.
export async function insertIgnoringConflicts(
  db: Database,
  table: string,
  columns: readonly string[],
  rows: readonly Row[],
  transaction: Transaction,
): Promise<number> {
  const onConflict = db.dialect === 'sqlite' ? ' ON CONFLICT DO NOTHING' : ' ON DUPLICATE KEY UPDATE id = id';
  return insert(db, table, columns, rows, onConflict, transaction);
}

// INSERT, or UPDATE the listed columns of the row that clashes on conflictColumns.
export async function upsertRows(
  db: Database,
  table: string,
  columns: readonly string[],
  rows: readonly Row[],
  conflictColumns: readonly string[],
  updateColumns: readonly string[],
  transaction: Transaction,
): Promise<void> {
  const onConflict =
    db.dialect === 'sqlite'
      ? ` ON CONFLICT (${conflictColumns.join(', ')}) DO UPDATE SET ${updateColumns.map((c) => `${c} = excluded.${c}`).join(', ')}`
      : ` ON DUPLICATE KEY UPDATE ${updateColumns.map((c) => `${c} = VALUES(${c})`).join(', ')}`;
  await insert(db, table, columns, rows, onConflict, transaction);
}

// Row locks for the rest of the transaction on MySQL; SQLite needs none (one writer at a time).
export function forUpdate(db: Database): string {
  return db.dialect === 'sqlite' ? '' : ' FOR UPDATE';
}

// A claim: lock the rows no other transaction holds, and pass over the rest rather than wait
// for them (MySQL 8.0.1+, MariaDB 10.6+). On SQLite a write transaction is already the only one.
export function skipLocked(db: Database): string {
  return db.dialect === 'sqlite' ? '' : ' FOR UPDATE SKIP LOCKED';
}

// Shared: the rows cannot change or go while the transaction relies on them. (MySQL 8's
// FOR SHARE is not MariaDB's; LOCK IN SHARE MODE is both's.)
export function forShare(db: Database): string {
  return db.dialect === 'sqlite' ? '' : ' LOCK IN SHARE MODE';
}

export async function select<T>(
  db: Database,
  sql: string,
  values: readonly unknown[],
  transaction?: Transaction,
): Promise<T[]> {
  return orUnavailable(
    async () => (await db.sequelize.query(sql, directStatementOptions({ values, returnsRows: true }, transaction))) as T[],
  );
}
