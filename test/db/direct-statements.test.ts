import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { UniqueConstraintError } from 'sequelize';
import { openDatabase, prepareDatabase } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { execute, insertRows, select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { createAccount } from '../../src/services/accounts';
import { createContact, upsertContact } from '../../src/services/contacts/contact-operations';
import { api } from '../support/app';
import { captureQueries, rebindModelsToTestDb, testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';

// The request path's statements go to the database with their values bound (prepared
// statements on MySQL), not through Sequelize's query path (src/db/direct-statements.ts).
// What callers rely on stays: Sequelize's error classes, lists, timestamps, statement counts.

// The statements that go through Sequelize's own query path (a Query object each) while fn runs.
async function statementsViaQuery(fn: () => Promise<void>): Promise<string[]> {
  const Query = (testDb().sequelize as unknown as { dialect: { Query: { prototype: { run: (...args: unknown[]) => unknown } } } }).dialect.Query;
  const run = Query.prototype.run;
  const viaQuery: string[] = [];
  Query.prototype.run = function (this: unknown, ...args: unknown[]) {
    viaQuery.push(String(args[0]));
    return run.apply(this, args);
  };
  try {
    await fn();
  } finally {
    Query.prototype.run = run;
  }
  return viaQuery;
}

describe('statements with bound values', () => {
  it('still answers 409 for an email another contact has, and stores nothing', async () => {
    const { key, accountId } = await buildTenant();
    await buildContact(accountId, { email: 'taken@example.com' });
    const res = await api(key).post('/contacts').send({ email: 'Taken@Example.com', firstName: 'Second' });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ error: 'A contact with this email already exists', code: 'contact_exists' });
    const rows = await select<{ first_name: string | null }>(testDb(), 'SELECT first_name FROM contacts WHERE account_id = ?', [accountId]);
    expect(rows).to.deep.equal([{ first_name: null }]);
  });

  it('fails a clashing insert with UniqueConstraintError, as Sequelize did', async () => {
    const { accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    const now = new Date();
    const outcome = await withTransaction(testDb(), (transaction) =>
      insertRows(
        testDb(),
        'contacts',
        ['id', 'account_id', 'email', 'email_normalized', 'tags', 'custom_fields', 'created_at', 'updated_at'],
        [[randomUUID(), accountId, contact.email, contact.email, '[]', '{}', now, now]],
        transaction,
      ),
    ).catch((error: unknown) => error);
    expect(outcome).to.be.instanceOf(UniqueConstraintError);
  });

  it('expands a list value into one placeholder per item, and an empty list into none that match', async () => {
    const { accountId } = await buildTenant();
    const contacts = await Promise.all([1, 2, 3].map(() => buildContact(accountId)));
    const read = (ids: string[]) =>
      select<{ id: string }>(testDb(), 'SELECT id FROM contacts WHERE account_id = ? AND id IN (?) ORDER BY id', [accountId, ids]);
    expect((await read(contacts.map((c) => c.id))).map((r) => r.id)).to.deep.equal(contacts.map((c) => c.id).sort());
    expect(await read([contacts[1].id])).to.deep.equal([{ id: contacts[1].id }]);
    expect(await read([])).to.deep.equal([]);
  });

  it('keeps values out of the statement text that is logged and counted', async () => {
    const { accountId } = await buildTenant();
    const email = `private-${randomUUID()}@example.com`;
    const { queries } = await captureQueries(() => upsertContact(testDb(), { accountId, email, firstName: 'Secret' }));
    expect(queries.length).to.be.greaterThan(0);
    expect(queries.join('\n')).to.not.include(email);
    expect(queries.join('\n')).to.not.include('Secret');
  });

  it("answers the API's requests with every statement, a transaction's BEGIN and COMMIT included, off Sequelize's Query path", async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contacts = await Promise.all([1, 2, 3].map(() => buildContact(accountId)));
    const ids = contacts.map((contact) => contact.id);
    const viaQuery = await statementsViaQuery(async () => {
      await api(key).get(`/contacts/${ids[0]}`).expect(200);
      await api(key).post('/contacts/upsert').send({ email: contacts[0]!.email, customFields: { n: 1 } }).expect(200);
      await api(key).post('/contacts').send({ email: `new-${randomUUID()}@example.com`, tags: ['a'] }).expect(201);
      await api(key).post('/contacts/batch').send({ contacts: [{ email: `b-${randomUUID()}@example.com` }] }).expect(201);
      await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: `t-${randomUUID()}@example.com` } }).expect(202);
      await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: ids }).expect(201);
      await api(key).get(`/sequences/${sequence.id}/enrollments/${ids[0]}`).expect(200);
      await api(key).post(`/sequences/${sequence.id}/unenroll`).send({ contactIds: ids }).expect(200);
    });
    expect(viaQuery).to.deep.equal([]);
  });

  it('still logs and counts BEGIN and COMMIT', async () => {
    const { accountId } = await buildTenant();
    const { queries } = await captureQueries(() => upsertContact(testDb(), { accountId, email: `q-${randomUUID()}@example.com` }));
    expect(queries.filter((sql) => /(START|BEGIN).*TRANSACTION;$/.test(sql))).to.have.length(1);
    expect(queries.filter((sql) => /COMMIT;$/.test(sql))).to.have.length(1);
  });

  it('rolls a failed transaction back on its connection: nothing it wrote stays', async () => {
    const { accountId } = await buildTenant();
    const email = `rolled-${randomUUID()}@example.com`;
    const outcome = await withTransaction(testDb(), async (transaction) => {
      const now = new Date();
      await insertRows(
        testDb(),
        'contacts',
        ['id', 'account_id', 'email', 'email_normalized', 'tags', 'custom_fields', 'created_at', 'updated_at'],
        [[randomUUID(), accountId, email, email, '[]', '{}', now, now]],
        transaction,
      );
      throw new Error('after the insert');
    }).catch((error: unknown) => error);
    expect((outcome as Error).message).to.equal('after the insert');
    expect(await select(testDb(), 'SELECT id FROM contacts WHERE email_normalized = ?', [email])).to.deep.equal([]);
    // The connection went back to the pool in a usable state.
    const contact = await upsertContact(testDb(), { accountId, email });
    expect(contact.contact.email).to.equal(email);
  });

  it('stores timestamps with their milliseconds and reads them back as written', async () => {
    const { accountId, key } = await buildTenant();
    const at = new Date('2026-11-22T10:11:12.345Z');
    const id = (await buildContact(accountId)).id;
    const changed = await execute(testDb(), 'UPDATE contacts SET updated_at = ? WHERE id = ?', [at, id]);
    expect(changed).to.equal(1);
    const res = await api(key).get(`/contacts/${id}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact.updatedAt).to.equal('2026-11-22T10:11:12.345Z');
  });

  it('keeps at most 64 prepared statements per connection on the server (MySQL)', async function () {
    if (testDb().dialect !== 'mysql') {
      this.test!.title += ' (skipped: MySQL only)';
      this.skip();
    }
    const { accountId } = await buildTenant();
    const counters = async (transaction: Parameters<Parameters<typeof withTransaction>[1]>[0]) => {
      const rows = await select<{ Variable_name: string; Value: string }>(
        testDb(),
        "SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_close')",
        [],
        transaction,
      );
      return Object.fromEntries(rows.map((row) => [row.Variable_name, Number(row.Value)]));
    };
    await withTransaction(testDb(), async (transaction) => {
      const before = await counters(transaction);
      // 100 list lengths: 100 statement shapes on one connection.
      for (let n = 1; n <= 100; n += 1) {
        const ids = Array.from({ length: n }, () => randomUUID());
        await select(testDb(), 'SELECT id FROM contacts WHERE account_id = ? AND id IN (?)', [accountId, ids], transaction);
      }
      const after = await counters(transaction);
      const open = after.Com_stmt_prepare - before.Com_stmt_prepare - (after.Com_stmt_close - before.Com_stmt_close);
      expect(after.Com_stmt_prepare - before.Com_stmt_prepare).to.be.at.least(100);
      expect(open).to.be.at.most(64);
    });
  });
});

describe('the embedded SQLite file under concurrent writes', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'direct-statements-'));
  });
  afterEach(() => {
    rebindModelsToTestDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves 40 concurrent creates and upserts, each stored once', async function () {
    this.timeout(20_000);
    const db = openDatabase(`sqlite:${path.join(dir, 'service.sqlite')}`);
    try {
      await prepareDatabase(db);
      await migrateToLatest(db);
      const account = await createAccount(db, { name: 'Concurrent' });
      const emails = Array.from({ length: 20 }, (_, i) => `c${i}@example.com`);
      const outcomes = await Promise.allSettled([
        ...emails.map((email) => createContact(db, { accountId: account.id, email })),
        ...emails.map((email) => upsertContact(db, { accountId: account.id, email, firstName: 'Up' })),
      ]);
      expect(outcomes.filter((o) => o.status === 'rejected')).to.deep.equal([]);
      const rows = await select<{ email: string; first_name: string | null }>(
        db,
        'SELECT email, first_name FROM contacts WHERE account_id = ? ORDER BY email',
        [account.id],
      );
      expect(rows.map((row) => row.email)).to.deep.equal([...emails].sort());
      // Every upsert came after its create (queued in order), so it updated the contact.
      expect(rows.every((row) => row.first_name === 'Up')).to.equal(true);
    } finally {
      await db.close();
    }
  });
});
