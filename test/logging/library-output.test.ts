import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import mysql from 'mysql2/promise';
import { routeConsoleToLog } from '../../src/logging/console-to-log';
import { openDatabase, type Database } from '../../src/db/database';
import { createAccount } from '../../src/services/accounts';
import { createApiKey } from '../../src/services/api-keys';
import { rebindModelsToTestDb, TEST_DATABASE_URL } from '../support/db';
import { bufferLogger } from '../support/log-buffer';
import { startServer, type StartedServer } from '../support/server-process';
import { mariadbMissing, startMariadb, type ThrowawayServer } from '../support/throwaway-servers';

// Libraries that write to the console themselves, during a database fault: Sequelize, when the
// ROLLBACK of a transaction whose connection the database dropped fails ("We are killing its
// connection"), and Node's own warnings. Measured before: a plain-text line on stderr among
// the JSON ones. Now each is one JSON line of the service's log, and nothing else reaches
// stdout or stderr.

// What the process writes to its own stdout and stderr while fn runs (kept from the terminal).
async function processOutput(fn: () => Promise<void>): Promise<string> {
  let written = '';
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written += String(chunk);
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof stream.write;
  }
  try {
    await fn();
  } finally {
    streams.forEach((stream, i) => (stream.write = writes[i]!));
  }
  return written;
}

// A transaction whose connection goes away under it, as when the database restarts or kills
// it: MySQL kills it from another connection; SQLite's connection is closed.
async function loseConnectionMidTransaction(db: Database): Promise<unknown> {
  let lost: unknown;
  await db.sequelize
    .transaction(async (transaction) => {
      const connection = (transaction as unknown as { connection: { close(callback: (error: Error | null) => void): void } }).connection;
      if (db.dialect === 'mysql') {
        const [[row]] = (await db.sequelize.query('SELECT CONNECTION_ID() AS id', { transaction })) as [Array<{ id: number }>, unknown];
        await db.sequelize.query(`KILL ${Number(row!.id)}`);
      } else {
        await new Promise<void>((resolve, reject) => connection.close((error) => (error ? reject(error) : resolve())));
        lost = connection;
      }
      await db.sequelize.query('SELECT 1', { transaction });
    })
    .then(
      () => expect.fail('the transaction should have failed'),
      () => undefined,
    );
  return lost;
}

describe('library output during a database fault', () => {
  let dir: string;
  let db: Database;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'library-output-'));
    // A database of its own: the fault breaks a connection.
    db = openDatabase(TEST_DATABASE_URL.startsWith('mysql') ? TEST_DATABASE_URL : `sqlite:${path.join(dir, 'fault.sqlite')}`);
  });
  afterEach(async () => {
    await db.close();
    rebindModelsToTestDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("logs Sequelize's warning about a failed ROLLBACK, and Node's warnings, as JSON lines of the log, with nothing else on stdout or stderr", async () => {
    const log = bufferLogger('info');
    let lost: unknown;
    const output = await processOutput(async () => {
      const restore = routeConsoleToLog(log.logger);
      try {
        lost = await loseConnectionMidTransaction(db);
        process.emitWarning('a listener leak, say', 'MaxListenersExceededWarning');
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        restore();
      }
    });
    // Sequelize keeps SQLite's closed connection, and would fail to close it again.
    const connections = (db.sequelize.connectionManager as unknown as { connections: Record<string, unknown> }).connections ?? {};
    for (const [name, connection] of Object.entries(connections)) if (connection === lost) delete connections[name];

    expect(output).to.equal('');
    const text = log.text();
    for (const line of text.split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.to.throw();
    const rollback = log.records().filter((r) => /^Rolling back transaction .* We are killing its connection/.test(r.msg));
    expect(rollback.map((r) => [r.level, r.source])).to.deep.equal([['warn', 'console.warn']]);
    const warnings = log.records().filter((r) => r.source === 'process.warning');
    expect(warnings.map((r) => [r.level, r.msg, (r.err as { type: string }).type])).to.deep.equal([['warn', 'a listener leak, say', 'Error']]);
  });

  it('puts the console back', async () => {
    const log = bufferLogger('info');
    const warn = console.warn;
    const warningListeners = process.listeners('warning');
    routeConsoleToLog(log.logger)();
    expect(console.warn).to.equal(warn);
    expect(process.listeners('warning')).to.deep.equal(warningListeners);
  });
});

const missing = mariadbMissing();

// The real server, in a child process, on a MariaDB of its own whose connections are killed
// under it (as a restart or a failover does) while it writes.
describe(missing ? `the server's output while MariaDB kills its connections (skipped: ${missing})` : "the server's output while MariaDB kills its connections", function () {
  this.timeout(120_000);
  let mariadb: ThrowawayServer | undefined;
  let server: StartedServer | undefined;

  before(async function () {
    if (missing) {
      if (process.env.CI) throw new Error(missing);
      this.skip();
    }
    mariadb = await startMariadb();
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await mariadb?.stop();
  });

  it('writes only JSON lines to stderr, Sequelize\'s "killing its connection" among them, nothing to stdout, and answers 503, never 500', async () => {
    server = await startServer(mariadb!.url, { WEBHOOK_DISPATCHER: 'off', RATE_LIMIT_PER_MINUTE: '1000000' });
    const setup = openDatabase(mariadb!.url);
    const account = await createAccount(setup, { name: 'Killed connections' });
    const { key } = await createApiKey(setup, { accountId: account.id, name: 'fault' });
    await setup.close();
    rebindModelsToTestDb();

    const stdoutBefore = server.stdout();
    const stderrFrom = server.stderr().length;
    const killer = await mysql.createConnection(mariadb!.url);
    const statuses = new Set<number>();
    let writing = true;
    let sent = 0;
    const writer = async () => {
      while (writing) {
        sent += 1;
        await fetch(`http://127.0.0.1:${server!.port}/api/v1/contacts`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ email: `k${sent}@example.com` }),
        }).then((res) => {
          statuses.add(res.status);
          return res.arrayBuffer();
        });
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    const killed = () => /We are killing its connection/.test(server!.stderr().slice(stderrFrom));
    try {
      const deadline = Date.now() + 30_000;
      while (!killed() && Date.now() < deadline) {
        const [rows] = (await killer.query(
          "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AND ID <> CONNECTION_ID()",
        )) as unknown as [Array<{ ID: number }>];
        await Promise.all(rows.map((row) => killer.query(`KILL ${Number(row.ID)}`).catch(() => undefined)));
        // A round of kills every 20 ms while the writes go on, until one lands mid-transaction.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      writing = false;
      await Promise.all(writers);
      await killer.end();
    }

    const lines = server.stderr().slice(stderrFrom).split('\n').filter(Boolean);
    const notJson = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).to.deep.equal([]);
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: string; source?: string; msg: string })
      .filter((record) => /We are killing its connection/.test(record.msg));
    expect(warnings.length, 'Sequelize warnings logged').to.be.at.least(1);
    expect(warnings.every((r) => r.level === 'warn' && r.source === 'console.warn')).to.equal(true);
    expect(server.stdout()).to.equal(stdoutBefore);
    // A connection killed under a request, even at its COMMIT, is a 503 to retry, never a 500.
    expect([...statuses].filter((status) => status !== 201 && status !== 503)).to.deep.equal([]);
  });
});
