import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { openDatabase, prepareDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import sqlite3 from 'sqlite3';
import { execute, select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { createAccount } from '../../src/services/accounts';
import { createApiKey } from '../../src/services/api-keys';
import { SequenceEngine } from '../../src/services/engine/engine';
import { silentLogger } from '../support/app';
import { channelSettings } from '../support/channels';
import { rebindModelsToTestDb } from '../support/db';
import { startSmtpServer } from '../support/smtp-server';

// The embedded default is an SQLite FILE (not :memory:), with one service and no worker: the
// engine records a batch of sends while the API enrolls (issue 34, section 6: it answered
// `500 SQLITE_BUSY: database is locked`). The cause: writes made outside a transaction (the
// send throttle giving back unused tokens, a stopping dispatcher handing sends back) ran on the
// reads' connection, a second writer; a transaction that had read before such a write
// committed was then refused its first write at once. Every write now goes through the
// process's one writer queue (src/db/sql/transaction.ts); another process holding the file
// past the busy bound is a 503 with Retry-After, never a 500.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };

describe('SQLite file: API writes while the engine records sends', function () {
  this.timeout(120_000);
  let dir: string;
  let db: Database | undefined;
  const cleanups: Array<() => Promise<unknown> | void> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'svc-sqlite-busy-'));
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await db?.close();
    db = undefined;
    rebindModelsToTestDb();
    rmSync(dir, { recursive: true, force: true });
  });

  async function openFileDb(timeouts?: { acquireTimeoutMs: number; queryTimeoutMs: number }): Promise<Database> {
    db = openDatabase(`sqlite:${path.join(dir, 'service.sqlite')}`, { timeouts });
    await prepareDatabase(db);
    await migrateToLatest(db);
    return db;
  }

  it('queues a write made outside a transaction behind the open one, instead of failing that one with SQLITE_BUSY', async () => {
    const db = await openFileDb();
    const account = await createAccount(db, { name: 'Counter', maxActiveRuns: null });
    const read = async () => (await select<{ name: string }>(db, 'SELECT name FROM accounts WHERE id = ?', [account.id]))[0]!.name;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const begun = new Promise<void>((resolve) => (began = resolve));
    // A transaction that reads, waits (a request's work between its reads and its writes), then writes.
    const transaction = withTransaction(db, async (t) => {
      await select(db, 'SELECT name FROM accounts WHERE id = ?', [account.id], t);
      began();
      await gate;
      await execute(db, "UPDATE accounts SET name = name || ' +inside' WHERE id = ?", [account.id], t);
    });
    await begun;
    // Meanwhile a write with no transaction (as the send throttle's release makes).
    const outside = execute(db, "UPDATE accounts SET name = name || ' +outside' WHERE id = ?", [account.id]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [inside, alone] = await Promise.allSettled([transaction, outside]);
    expect(inside.status, inside.status === 'rejected' ? String(inside.reason) : '').to.equal('fulfilled');
    expect(alone.status, alone.status === 'rejected' ? String(alone.reason) : '').to.equal('fulfilled');
    expect(await read()).to.equal('Counter +inside +outside');
  });

  it('answers 503 with Retry-After when another process holds the file past the bound, writes nothing, and serves once it lets go', async () => {
    const db = await openFileDb({ acquireTimeoutMs: 200, queryTimeoutMs: 200 });
    const account = await createAccount(db, { name: 'Shop', maxActiveRuns: null });
    const { key } = await createApiKey(db, { accountId: account.id, name: 'test key' });
    const app = createApp({ db, config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger });
    await request(app).get('/api/v1/contacts').set('x-api-key', key).expect(200);
    // The admin command line, say: another connection to the same file, in a write transaction.
    const other = new sqlite3.Database(path.join(dir, 'service.sqlite'));
    const run = (sql: string) => new Promise<void>((resolve, reject) => other.exec(sql, (error) => (error ? reject(error) : resolve())));
    cleanups.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
    await run('BEGIN IMMEDIATE');
    const began = Date.now();
    const refused = await request(app).post('/api/v1/contacts').set('x-api-key', key).send({ email: 'ada@example.com' });
    expect(refused.status).to.equal(503);
    expect(refused.headers['retry-after']).to.equal('5');
    expect(refused.body).to.include({ error: 'Database busy; retry shortly' });
    expect(Date.now() - began).to.be.below(3_000);
    await run('ROLLBACK');
    expect(await select(db, 'SELECT id FROM contacts WHERE email = ?', ['ada@example.com'])).to.deep.equal([]);
    const created = await request(app).post('/api/v1/contacts').set('x-api-key', key).send({ email: 'ada@example.com' });
    expect(created.status).to.equal(201);
  });

  it('enrolls over HTTP while a batch of emails is sent and recorded: every answer 2xx, every email sent once', async () => {
    const db = await openFileDb();
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.close());
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: smtp.url });
    const account = await createAccount(db, { name: 'Busy shop', maxActiveRuns: null });
    const { key } = await createApiKey(db, { accountId: account.id, name: 'test key' });
    const app = createApp({ db, config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, channels: settings });
    const api = (method: 'post' | 'get', url: string) => request(app)[method](`/api/v1${url}`).set('x-api-key', key);

    const created = await api('post', '/sequences').send({ name: 'Welcome', status: 'active', steps: [EMAIL, { id: 'after', type: 'tag', add: ['welcomed'] }] });
    expect(created.status).to.equal(201);
    const sequenceId = created.body.sequence.id as string;
    const contactIds: string[] = [];
    for (let batch = 0; batch < 2; batch += 1) {
      const res = await api('post', '/contacts/batch').send({
        contacts: Array.from({ length: 100 }, (_, i) => ({ email: `c${batch * 100 + i}@example.com`, firstName: `C${i}` })),
      });
      expect(res.status, JSON.stringify(res.body)).to.be.within(200, 201);
    }
    contactIds.push(...(await select<{ id: string }>(db, 'SELECT id FROM contacts WHERE account_id = ? ORDER BY email', [account.id])).map((row) => row.id));
    expect(contactIds).to.have.length(200);

    const engine = new SequenceEngine(db, {
      logger: silentLogger,
      webhook: { timeoutMs: 2_000, allowInsecure: true },
      idlePollMs: 20,
      messages: { settings, outboxDir: path.join(dir, 'outbox'), smtpTimeouts: { connectionMs: 2_000, greetingMs: 2_000, socketMs: 2_000 } },
    });
    engine.start();
    cleanups.push(() => engine.stop(2_000));

    // A first batch starts sending; then, while its outcomes are recorded, more enrolls, one
    // contact at a time and in small batches, and contacts created by email.
    const first = await api('post', `/sequences/${sequenceId}/enroll`).send({ contactIds: contactIds.slice(0, 100) });
    expect(first.status).to.equal(201);
    const statuses: number[] = [];
    const bodies: unknown[] = [];
    const writes: Array<Promise<void>> = [];
    for (let i = 100; i < 200; i += 2) {
      writes.push(
        api('post', `/sequences/${sequenceId}/enroll`)
          .send({ contactIds: contactIds.slice(i, i + 2) })
          .then((res) => {
            statuses.push(res.status);
            if (res.status >= 300) bodies.push(res.body);
          }),
      );
      writes.push(
        api('post', `/sequences/${sequenceId}/enroll-by-email`)
          .send({ email: `late${i}@example.com` })
          .then((res) => {
            statuses.push(res.status);
            if (res.status >= 300) bodies.push(res.body);
          }),
      );
    }
    await Promise.all(writes);
    expect(bodies).to.deep.equal([]);
    expect(statuses.every((status) => status === 201)).to.equal(true);

    // Every enrolled contact gets its email once.
    const total = 200 + 50;
    for (let i = 0; i < 600 && smtp.received.length < total; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(smtp.received).to.have.length(total);
    expect(new Set(smtp.received.map((mail) => mail.parsed.messageId)).size).to.equal(total);
    for (let i = 0; i < 200; i += 1) {
      const [row] = await select<{ n: number | string }>(db, "SELECT COUNT(*) AS n FROM messages WHERE status = 'sent'", []);
      if (Number(row!.n) === total) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [sent] = await select<{ n: number | string }>(db, "SELECT COUNT(*) AS n FROM messages WHERE status = 'sent'", []);
    expect(Number(sent!.n)).to.equal(total);
  });
});
