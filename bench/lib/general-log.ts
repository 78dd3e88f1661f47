import type { Connection } from 'mysql2/promise';

// MariaDB's general log, written to the mysql.general_log table, as the record of what a
// server really sent: the check that the service and the bare server send the same
// statements, and the source of the statements that bench:scale EXPLAINs.

export interface LoggedStatement {
  thread: number;
  command: string;
  sql: string;
}

export class GeneralLog {
  private saved?: { output: string; enabled: string };

  // own: the benchmark's own MariaDB, where the log is always left off (a run stopped in the
  // middle leaves it on; the next one must not take that for the setting to restore).
  constructor(
    private readonly admin: Connection,
    private readonly own: boolean,
  ) {}

  async start(): Promise<void> {
    const [rows] = await this.admin.query("SELECT @@GLOBAL.log_output AS output, @@GLOBAL.general_log AS enabled");
    const [{ output, enabled }] = rows as Array<{ output: string; enabled: number | string }>;
    this.saved = { output, enabled: String(enabled) };
    await this.admin.query("SET GLOBAL log_output = 'TABLE'");
    await this.admin.query('TRUNCATE TABLE mysql.general_log');
    await this.admin.query('SET GLOBAL general_log = 1');
  }

  async clear(): Promise<void> {
    await this.admin.query('TRUNCATE TABLE mysql.general_log');
  }

  // What every other connection sent since the last clear, in order. Statements only: Query
  // and Execute (a Prepare is made once per connection and cached).
  async statements(): Promise<LoggedStatement[]> {
    const [rows] = await this.admin.query(
      `SELECT thread_id AS thread, command_type AS command, CONVERT(argument USING utf8mb4) AS \`sql\`
         FROM mysql.general_log WHERE thread_id <> CONNECTION_ID()`,
    );
    return (rows as LoggedStatement[]).filter((row) => row.command === 'Query' || row.command === 'Execute');
  }

  async stop(): Promise<void> {
    if (!this.saved) return;
    await this.admin.query(`SET GLOBAL general_log = ${this.saved.enabled === '1' && !this.own ? 1 : 0}`);
    await this.admin.query('SET GLOBAL log_output = ?', [this.saved.output]);
    await this.admin.query('TRUNCATE TABLE mysql.general_log');
    this.saved = undefined;
  }
}

// Per-connection set-up (time zone, isolation level, sql_mode): not part of a request.
export function isSessionSetup(sql: string): boolean {
  return /^\s*SET\s/i.test(sql);
}

// A statement's shape: values become ?, a list of n values `(?×n)`, m tuples of them
// `(?×n)×m`; quoting and spacing are ignored. Query and Execute of one statement, and the
// service's and the bare server's escaping, give one shape.
export function statementShape(sql: string): string {
  let shape = sql
    .replace(/`/g, '')
    .replace(/'(?:[^'\\]|\\.|'')*'/g, '?')
    .replace(/\bNULL\b/gi, '?')
    .replace(/(?<![\w.])-?\d+(?:\.\d+)?\b/g, '?')
    .replace(/\s+/g, ' ')
    .replace(/\s*,\s*/g, ', ')
    .replace(/\(\s+/g, '(')
    .replace(/\s+\)/g, ')')
    .trim();
  shape = shape.replace(/\((\?(?:, \?)*)\)/g, (_m, inner: string) => `(?×${inner.split(',').length})`);
  shape = shape.replace(/(\(\?×\d+\))(?:, \1)+/g, (m: string, tuple: string) => `${tuple}×${(m.length + 2) / (tuple.length + 2)}`);
  return shape;
}
