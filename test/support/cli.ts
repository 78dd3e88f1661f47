import { expect } from 'chai';
import { runCli } from '../../src/cli/run-cli';
import { openDatabase, type Database } from '../../src/db/database';

// The admin command line run in-process on a database of its own, as `npm run cli` runs it on
// DATABASE_URL: what it printed and its exit code.

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCliOn(databaseUrl: string, argv: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { databaseUrl }, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}

// A command that must succeed: its JSON output, and the text it printed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function cliOk(databaseUrl: string, argv: string[]): Promise<{ json: any; text: string }> {
  const result = await runCliOn(databaseUrl, argv);
  expect(result.stderr, `stderr of ${argv.join(' ')}`).to.equal('');
  expect(result.code, `exit code of ${argv.join(' ')}`).to.equal(0);
  return { json: JSON.parse(result.stdout), text: result.stdout };
}

// A command refused as bad arguments: exit 2, one line on stderr, nothing on stdout.
export async function cliRefused(databaseUrl: string, argv: string[]): Promise<string> {
  const result = await runCliOn(databaseUrl, argv);
  expect(result.code, `exit code of ${argv.join(' ')}`).to.equal(2);
  expect(result.stdout).to.equal('');
  expect(result.stderr).to.match(/^error: [^\n]+\n$/);
  return result.stderr;
}

// The CLI's database, opened as the service opens it.
export async function withDatabaseAt<T>(databaseUrl: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openDatabase(databaseUrl);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
