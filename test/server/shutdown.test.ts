import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { TEST_DATABASE_URL, testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { demoKey, ensureBuilt, isRunning, REPO, serverEnv, startServer, whenListening, type StartedServer } from '../support/server-process';

// Graceful shutdown of the real server process (docs/operations.md "Health and shutdown"), on the
// embedded SQLite file and, when TEST_DATABASE_URL is MariaDB, on MariaDB.

interface Outcome {
  email: string;
  sentAt: number;
  status?: number;
  connection?: string;
  error?: string;
}

// One worker: its own kept-alive connection, writing one new contact per request until the
// server stops answering.
async function writeUntilRefused(port: number, key: string, worker: number, outcomes: Outcome[], until: () => boolean) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; !until(); i += 1) {
      const email = `load-${worker}-${i}@example.com`;
      const outcome: Outcome = { email, sentAt: performance.now() };
      outcomes.push(outcome);
      const body = JSON.stringify({ email, firstName: `W${worker}` });
      await new Promise<void>((resolve) => {
        const req = http.request(
          {
            agent,
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/api/v1/contacts/upsert',
            headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            outcome.status = res.statusCode;
            outcome.connection = String(res.headers.connection);
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          outcome.error = error.code ?? error.message;
          resolve();
        });
        outcome.sentAt = performance.now();
        req.end(body);
      });
      if (outcome.error === 'ECONNREFUSED') return;
    }
  } finally {
    agent.destroy();
  }
}

async function storedEmails(databaseUrl: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  if (databaseUrl.startsWith('mysql://')) {
    const rows = await select<{ email: string }>(testDb(), `SELECT email FROM contacts WHERE email IN (${emails.map(() => '?').join(', ')})`, emails);
    return new Set(rows.map((row) => row.email));
  }
  // The SQLite file the server wrote, read with the driver directly (no second Sequelize).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  const file = databaseUrl.slice('sqlite:'.length);
  const database = new sqlite3.Database(file, sqlite3.OPEN_READONLY);
  try {
    const rows = await new Promise<Array<{ email: string }>>((resolve, reject) =>
      database.all('SELECT email FROM contacts', (error, result) => (error ? reject(error) : resolve(result as Array<{ email: string }>))),
    );
    return new Set(rows.map((row) => row.email).filter((email) => emails.includes(email)));
  } finally {
    await new Promise((resolve) => database.close(resolve));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stopping the server', function () {
  this.timeout(120_000);
  let dir: string;

  before(() => ensureBuilt());
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shutdown-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  // The server, and a key that works on it: the demo key on a new SQLite file; on MariaDB, a
  // key made in the test database the server opens.
  async function serverWithKey(databaseUrl: string, env: NodeJS.ProcessEnv = {}) {
    if (databaseUrl.startsWith('mysql://')) {
      const tenant = await buildTenant();
      return { server: await startServer(databaseUrl, env), key: tenant.key };
    }
    const server = await startServer(databaseUrl, env);
    return { server, key: demoKey(server).key };
  }

  const databases = [
    { label: 'SQLite file', url: () => `sqlite:${path.join(dir, 'load.sqlite')}` },
    ...(TEST_DATABASE_URL.startsWith('mysql://') ? [{ label: 'MariaDB', url: () => TEST_DATABASE_URL }] : []),
  ];
  for (const database of databases) {
    it(`on SIGTERM under a 16-connection keep-alive load (${database.label}): no reset, no 5xx, every 2xx stored, exit 0`, async () => {
      const url = database.url();
      const { server, key } = await serverWithKey(url);
      const outcomes: Outcome[] = [];
      const stopAt = performance.now() + 20_000;
      const workers = Array.from({ length: 16 }, (_, worker) =>
        writeUntilRefused(server.port, key, worker, outcomes, () => performance.now() > stopAt),
      );
      await sleep(1_500);
      const signalAt = performance.now();
      server.child.kill('SIGTERM');
      const exitCode = await server.exited;
      const exitedAfterMs = performance.now() - signalAt;
      await Promise.all(workers);

      const before = outcomes.filter((o) => o.sentAt < signalAt);
      const after = outcomes.filter((o) => o.sentAt >= signalAt);
      const summary = {
        before: before.length,
        after: after.length,
        servedAfter: after.filter((o) => o.status).length,
        refusedAfter: after.filter((o) => o.error === 'ECONNREFUSED').length,
        exitedAfterMs: Math.round(exitedAfterMs),
      };
      console.log(`      ${JSON.stringify(summary)}`);
      expect(before.length, 'requests sent before the signal').to.be.greaterThan(50);
      expect(before.filter((o) => o.error), 'connection errors before the signal').to.deep.equal([]);
      expect(outcomes.filter((o) => (o.status ?? 0) >= 500), '5xx').to.deep.equal([]);
      expect(outcomes.filter((o) => o.error && o.error !== 'ECONNREFUSED'), 'resets').to.deep.equal([]);
      // A response once stopping began tells its client not to reuse the connection.
      expect(outcomes.filter((o) => o.status && o.sentAt >= signalAt + 100).every((o) => o.connection === 'close')).to.equal(true);
      expect(exitCode).to.equal(0);
      expect(exitedAfterMs).to.be.lessThan(5_000);
      const written = outcomes.filter((o) => o.status === 201).map((o) => o.email);
      const stored = await storedEmails(url, written);
      expect(written.filter((email) => !stored.has(email)), '2xx writes missing from the database').to.deep.equal([]);
      expect(server.stderr()).not.to.include('connection manager was closed');
      expect(server.stderr()).to.include('"msg":"stopped"');
      // The log is written asynchronously: nothing still buffered at exit is lost.
      const accessLines = server.stderr().split('\n').filter((line) => line.includes('"msg":"request completed"'));
      expect(accessLines.length, 'access lines of answered requests').to.be.at.least(outcomes.filter((o) => o.status).length);
    });
  }

  it('answers /readyz with 503 at once while requests in progress finish', async () => {
    const { server, key } = await serverWithKey(`sqlite:${path.join(dir, 'ready.sqlite')}`);
    // A request in progress: headers and half of the body sent, the rest held back.
    const body = JSON.stringify({ email: 'slow@example.com' });
    const slow = net.connect(server.port, '127.0.0.1');
    let slowResponse = '';
    slow.on('data', (chunk) => (slowResponse += chunk));
    const slowClosed = new Promise((resolve) => slow.on('close', resolve));
    slow.write(
      `POST /api/v1/contacts/upsert HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    const probe = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (route: string) =>
      new Promise<{ status: number; connection: string; body: string }>((resolve, reject) => {
        http
          .get({ agent: probe, port: server.port, host: '127.0.0.1', path: route }, (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, connection: String(res.headers.connection), body: text }));
          })
          .on('error', reject);
      });
    expect((await get('/readyz')).status).to.equal(200);
    server.child.kill('SIGTERM');
    await sleep(100);
    // The probe's kept-alive connection is still open (in its grace period): it hears 503.
    const during = await get('/readyz');
    expect(during.status).to.equal(503);
    expect(JSON.parse(during.body)).to.deep.equal({ error: 'Shutting down' });
    expect(during.connection).to.equal('close');
    expect(isRunning(server.pid), 'still running while a request is in progress').to.equal(true);
    slow.write(body.slice(5)); // no end(): a half-closed request is abandoned by Node's server
    await slowClosed;
    expect(slowResponse, server.stderr()).to.match(/^HTTP\/1\.1 201 /);
    expect(slowResponse).to.match(/\r\nconnection: close\r\n/i);
    expect(await server.exited).to.equal(0);
    probe.destroy();
  });

  it('gives up on a request still running after SHUTDOWN_TIMEOUT_SECONDS, and exits 1', async () => {
    const { server, key } = await serverWithKey(`sqlite:${path.join(dir, 'timeout.sqlite')}`, { SHUTDOWN_TIMEOUT_SECONDS: '1' });
    const stalled = net.connect(server.port, '127.0.0.1');
    stalled.on('error', () => undefined);
    stalled.write(`POST /api/v1/contacts/upsert HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`);
    await sleep(100);
    const signalAt = performance.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).to.equal(1);
    expect(performance.now() - signalAt).to.be.within(900, 4_000);
    expect(server.stderr()).to.include('shutdown timed out');
    stalled.destroy();
  });

  it('stops with exit code 0 when `npm start` is sent SIGTERM (npm relays it to the server)', async () => {
    const url = `sqlite:${path.join(dir, 'npm.sqlite')}`;
    const npm = spawn('npm', ['start'], { cwd: REPO, env: serverEnv(url), stdio: ['ignore', 'pipe', 'pipe'] });
    const server: StartedServer = await whenListening(npm);
    expect(server.pid, 'npm execs node: the server is its own process').not.to.equal(npm.pid);
    expect(fs.readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0')).to.include('dist/server.js');
    npm.kill('SIGTERM');
    const npmExit = await server.exited;
    for (let i = 0; i < 50 && isRunning(server.pid); i += 1) await sleep(100);
    expect(isRunning(server.pid), 'the server process is gone').to.equal(false);
    const stopped = server
      .stderr()
      .split('\n')
      .find((line) => line.includes('"msg":"stopped"'));
    expect(stopped, server.stderr()).to.be.a('string');
    expect(JSON.parse(stopped!).exitCode).to.equal(0);
    expect(npmExit).to.equal(0);
  });
});
