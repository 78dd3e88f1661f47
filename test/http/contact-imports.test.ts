import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { runImports, type ImportRunSettings } from '../../src/services/imports/run-import';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { updateSubscriptions } from '../../src/services/contacts/contact-operations';
import { createCaller, createCallerContext } from '../../src/routers/caller';

// Contact imports end to end (docs/api.md "Importing contacts"): a CSV uploaded over REST, moved
// by the background task's batches (driven here by hand, with the test's clock), its progress,
// its errors file, a crash mid-import and a cancel. Real files, the real database.

let dir: string;
let app: Express;
let clock: number;

function worker(owner = 'worker-a', overrides: Partial<ImportRunSettings> = {}): ImportRunSettings {
  return { dir, owner, batchSize: 500, leaseMs: 60_000, maxBatches: 1_000, now: async () => new Date(clock), ...overrides };
}

// Every queued import moved to its end.
async function drain(settings = worker()): Promise<void> {
  while (await runImports(testDb(), settings));
}

function upload(key: string, csv: string | Buffer, query = '') {
  return request(app).post(`/api/v1/contacts/imports${query}`).set('x-api-key', key).set('Content-Type', 'text/csv').send(Buffer.isBuffer(csv) ? csv : Buffer.from(csv));
}

const progress = async (key: string, id: string) => (await request(app).get(`/api/v1/contacts/imports/${id}`).set('x-api-key', key).expect(200)).body.import;

async function contactByEmail(accountId: string, email: string) {
  const [row] = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM contacts WHERE account_id = ? AND email_normalized = ?', [accountId, email]);
  return row;
}

const importRows = async () => select<{ id: string }>(testDb(), 'SELECT id FROM contact_imports', []);

describe('contact imports over REST', () => {
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imports-'));
    app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, imports: { dir } });
  });
  beforeEach(() => {
    clock = Date.parse('2026-12-02T10:00:00Z');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('imports a small file: new contacts inserted, existing ones merged, an unsubscribed one stays so', async () => {
    const { key, accountId } = await buildTenant();
    await buildContact(accountId, { email: 'ada@example.com', lastName: 'Lovelace', tags: ['old'], customFields: { city: 'London' } });
    const ada = await contactByEmail(accountId, 'ada@example.com');
    await updateSubscriptions(testDb(), { accountId, id: ada!.id as string, emailSubscriptionStatus: 'unsubscribed' });
    // A spreadsheet's export: BOM, semicolons, its own header names, a quoted cell.
    const csv = '\uFEFFE-mail;First Name;Last name;Tags;Plan;Email subscription status\r\n' +
      'ADA@example.com;Ada;;vip;pro;subscribed\r\n' +
      'grace@example.com;"Grace; RADM";Hopper;;basic;\r\n';
    const created = await upload(key, csv, '?tags=imported,2026&fileName=list.csv').expect(202);
    expect(created.headers.location).to.equal(`/api/v1/contacts/imports/${created.body.import.id}`);
    expect(created.body.import).to.include({ status: 'queued', rows: 2, processed: 0, fileName: 'list.csv' });
    expect(created.body.import.columns).to.deep.equal([
      { header: 'E-mail', field: 'email' },
      { header: 'First Name', field: 'firstName' },
      { header: 'Last name', field: 'lastName' },
      { header: 'Tags', field: 'tags' },
      { header: 'Plan', field: 'customFields.Plan' },
      { header: 'Email subscription status', field: 'emailSubscriptionStatus' },
    ]);

    await drain();
    const done = await progress(key, created.body.import.id);
    expect(done).to.include({ status: 'completed', rows: 2, processed: 2, inserted: 1, updated: 1, failed: 0 });
    expect(done.finishedAt).to.be.a('string');

    const merged = await contactByEmail(accountId, 'ada@example.com');
    expect(merged).to.include({ first_name: 'Ada', last_name: 'Lovelace', email_subscription_status: 'unsubscribed' });
    // The tags column replaces (the upsert's rule); the tags to add come after.
    expect(JSON.parse(merged!.tags as string)).to.deep.equal(['vip', 'imported', '2026']);
    expect(JSON.parse(merged!.custom_fields as string)).to.deep.equal({ city: 'London', Plan: 'pro' });
    const grace = await contactByEmail(accountId, 'grace@example.com');
    expect(grace).to.include({ first_name: 'Grace; RADM', last_name: 'Hopper', email_subscription_status: 'subscribed' });
    expect(JSON.parse(grace!.tags as string)).to.deep.equal(['imported', '2026']);
    // Its file is gone once it ended.
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('resubscribes only when the column says so and the request says these people opted in', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'ada@example.com' });
    await updateSubscriptions(testDb(), { accountId, id: contact.id, emailSubscriptionStatus: 'unsubscribed' });
    await upload(key, 'email\nada@example.com\n', '?optedIn=true').expect(202);
    await drain();
    expect(await contactByEmail(accountId, 'ada@example.com')).to.include({ email_subscription_status: 'unsubscribed' });
    await upload(key, 'email,emailSubscriptionStatus\nada@example.com,subscribed\n', '?optedIn=true').expect(202);
    await drain();
    expect(await contactByEmail(accountId, 'ada@example.com')).to.include({ email_subscription_status: 'subscribed' });
  });

  it('takes a mapping: a column renamed, one left out', async () => {
    const { key, accountId } = await buildTenant();
    const mapping = encodeURIComponent(JSON.stringify({ Address: 'email', Secret: null, Name: 'firstName' }));
    const created = await upload(key, 'Address,Name,Secret\nada@example.com,Ada,x\n', `?mapping=${mapping}`).expect(202);
    expect(created.body.import.columns).to.deep.equal([
      { header: 'Address', field: 'email' },
      { header: 'Name', field: 'firstName' },
      { header: 'Secret', field: null },
    ]);
    await drain();
    const ada = await contactByEmail(accountId, 'ada@example.com');
    expect(ada).to.include({ first_name: 'Ada' });
    expect(JSON.parse(ada!.custom_fields as string)).to.deep.equal({});
  });

  it('lists the rejected rows with their reasons as CSV; the good rows go in', async () => {
    const { key, accountId } = await buildTenant();
    const csv = 'email,firstName,whatsappSubscriptionStatus\n' +
      'ok@example.com,Ok,\n' +
      'not-an-email,Bad,\n' +
      ',Nobody,\n' +
      'short@example.com\n' +
      'status@example.com,S,maybe\n' +
      '\n' +
      'last@example.com,"=1+2",\n';
    const created = await upload(key, csv).expect(202);
    expect(created.body.import.rows).to.equal(6);
    await drain(worker('worker-a', { batchSize: 2 }));
    const id = created.body.import.id;
    expect(await progress(key, id)).to.include({ status: 'completed', processed: 6, inserted: 2, updated: 0, failed: 4 });
    expect(await contactByEmail(accountId, 'last@example.com')).to.include({ first_name: '=1+2' });

    const errors = await request(app).get(`/api/v1/contacts/imports/${id}/errors`).set('x-api-key', key).expect(200);
    expect(errors.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(errors.text.split('\r\n')).to.deep.equal([
      'row,reason,email,firstName,whatsappSubscriptionStatus',
      '2,"""email"" (email): Invalid email address",not-an-email,Bad,',
      '3,"""email"" (email): Email is required",,Nobody,',
      '4,"The row has 1 cells; the header has 3",short@example.com',
      '5,"""whatsappSubscriptionStatus"" (whatsappSubscriptionStatus): must be subscribed or unsubscribed, not ""maybe""",status@example.com,S,maybe',
      '',
    ]);
  });

  it('refuses a file that is not CSV, one with no email column, and a bad mapping, naming the problem; nothing is kept', async () => {
    const { key } = await buildTenant();
    const binary = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x08, 0x00, 0xff, 0xfe]);
    const notCsv = await upload(key, binary).expect(400);
    expect(notCsv.body).to.include({ code: 'validation_failed' });
    expect(notCsv.body.details[0]).to.deep.include({ path: 'file' });
    expect(notCsv.body.error).to.match(/not CSV text/);

    const noEmail = await upload(key, 'name,phone\nAda,+44 7700 900123\n').expect(400);
    expect(noEmail.body.details[0].path).to.equal('mapping.email');
    expect(noEmail.body.error).to.equal('No column maps to email (the header has "name", "phone"); name the email column in mapping, e.g. {"E-mail": "email"}');

    const badMapping = await upload(key, 'email\na@x.io\n', `?mapping=${encodeURIComponent('{"Mail":"email"}')}`).expect(400);
    expect(badMapping.body.details[0]).to.deep.equal({ path: 'mapping.Mail', message: 'No column "Mail" in the file\'s header ("email")' });
    const unknownField = await upload(key, 'email,x\na@x.io,1\n', `?mapping=${encodeURIComponent('{"x":"firstname"}')}`).expect(400);
    expect(unknownField.body.details[0].path).to.equal('mapping.x');

    const latin1 = await upload(key, Buffer.from('email,name\na@x.io,Zo\xeb\n', 'latin1')).expect(400);
    expect(latin1.body.error).to.match(/not UTF-8 text \(row 1\)/);
    await upload(key, '').expect(400);
    const sequence = await upload(key, 'email\na@x.io\n', '?sequenceId=00000000-0000-4000-8000-000000000000').expect(404);
    expect(sequence.body.error).to.equal('Sequence not found');

    expect(await importRows()).to.deep.equal([]);
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('refuses a file over 50 MB with a 413, keeping nothing', async () => {
    const { key } = await buildTenant();
    const row = 'someone@example.com,Someone,Somewhere\n';
    const big = Buffer.from(`email,firstName,lastName\n${row.repeat(Math.ceil((50 * 1024 * 1024) / row.length) + 1)}`);
    const refused = await upload(key, big);
    expect(refused.status).to.equal(413);
    expect(refused.body).to.include({ code: 'payload_too_large' });
    expect(await importRows()).to.deep.equal([]);
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('resumes after a crash from the last committed batch: no row applied twice', async () => {
    const { key, accountId } = await buildTenant();
    const lines = Array.from({ length: 7 }, (_, i) => `p${i}@example.com,P${i}`);
    lines.splice(3, 0, 'broken,X');
    const created = await upload(key, `email,firstName\n${lines.join('\n')}\n`, '?tags=imported').expect(202);
    const id = created.body.import.id;

    // Worker A commits one batch of 3 and dies (its step is abandoned, its lease left).
    expect(await runImports(testDb(), worker('worker-a', { batchSize: 3, maxBatches: 1 }))).to.equal(true);
    expect(await progress(key, id)).to.include({ status: 'running', processed: 3, inserted: 3 });
    // B finds it held while A's lease lasts, and takes it over once it has ended.
    expect(await runImports(testDb(), worker('worker-b', { batchSize: 3 }))).to.equal(false);
    clock += 60_001;
    await drain(worker('worker-b', { batchSize: 3 }));

    expect(await progress(key, id)).to.include({ status: 'completed', rows: 8, processed: 8, inserted: 7, updated: 0, failed: 1 });
    const [{ count }] = await select<{ count: number }>(testDb(), 'SELECT COUNT(*) AS count FROM contacts WHERE account_id = ?', [accountId]);
    expect(Number(count)).to.equal(7);
    // One contact.created each: no batch ran twice.
    const events = await select<{ type: string }>(testDb(), "SELECT type FROM events WHERE account_id = ? AND type = 'contact.created'", [accountId]);
    expect(events).to.have.length(7);
    const errors = await select<{ row_index: number }>(testDb(), 'SELECT row_index FROM contact_import_errors WHERE import_id = ?', [id]);
    expect(errors.map((e) => Number(e.row_index))).to.deep.equal([4]);
  });

  it('cancels a queued import and a running one; what was committed stays', async () => {
    const { key, accountId } = await buildTenant();
    const queued = await upload(key, 'email\na@x.io\n').expect(202);
    const cancelled = await request(app).post(`/api/v1/contacts/imports/${queued.body.import.id}/cancel`).set('x-api-key', key).expect(200);
    expect(cancelled.body.import).to.include({ status: 'cancelled', processed: 0 });
    await drain();
    expect(await contactByEmail(accountId, 'a@x.io')).to.equal(undefined);

    const running = await upload(key, 'email\nb1@x.io\nb2@x.io\nb3@x.io\n').expect(202);
    const id = running.body.import.id;
    await runImports(testDb(), worker('worker-a', { batchSize: 1, maxBatches: 1 }));
    await request(app).post(`/api/v1/contacts/imports/${id}/cancel`).set('x-api-key', key).expect(200);
    await drain(worker('worker-a', { batchSize: 1 }));
    expect(await progress(key, id)).to.include({ status: 'cancelled', processed: 1, inserted: 1 });
    expect(await contactByEmail(accountId, 'b2@x.io')).to.equal(undefined);
    // Cancelling an ended import changes nothing.
    const again = await request(app).post(`/api/v1/contacts/imports/${id}/cancel`).set('x-api-key', key).expect(200);
    expect(again.body.import.status).to.equal('cancelled');
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('enrolls the imported contacts into a sequence', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const created = await upload(key, 'email\na@x.io\nb@x.io\n', `?sequenceId=${sequence.id}`).expect(202);
    await drain();
    expect(await progress(key, created.body.import.id)).to.include({ status: 'completed', inserted: 2, enrolled: 2 });
    const runs = await select(testDb(), 'SELECT id FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    expect(runs).to.have.length(2);
  });

  it('takes the CSV in a JSON body too (REST and tRPC), and answers another account\'s import as unknown', async () => {
    const { key, accountId } = await buildTenant();
    const created = await request(app).post('/api/v1/contacts/imports').set('x-api-key', key).send({ csv: 'email\njson@x.io\n', tags: ['json'] }).expect(202);
    const trpc = createCaller(createCallerContext({ db: testDb(), apiKey: key, imports: { dir } }));
    const viaTrpc = await trpc.contacts.imports.create({ csv: 'email;firstName\ntrpc@x.io;T\n' });
    expect(viaTrpc.import).to.include({ status: 'queued', rows: 1 });
    await drain();
    expect(await contactByEmail(accountId, 'json@x.io')).to.include({ tags: '["json"]' });
    expect((await trpc.contacts.imports.get({ id: viaTrpc.import.id })).import.status).to.equal('completed');
    expect((await trpc.contacts.imports.list({})).imports.map((i) => i.id)).to.have.members([created.body.import.id, viaTrpc.import.id]);

    const other = await buildTenant();
    await request(app).get(`/api/v1/contacts/imports/${viaTrpc.import.id}`).set('x-api-key', other.key).expect(404);
    await request(app).get(`/api/v1/contacts/imports/${viaTrpc.import.id}/errors`).set('x-api-key', other.key).expect(404);
    const none = await request(app).post('/api/v1/contacts/imports').set('x-api-key', key).send({}).expect(400);
    expect(none.body.details[0].path).to.equal('file');
  });

  it('accepts a 1,000,000-row file and refuses one more row', async function () {
    this.timeout(120_000);
    const { key } = await buildTenant();
    const file = path.join(os.tmpdir(), `million-${process.pid}.csv`);
    const out = fs.createWriteStream(file);
    out.write('email\n');
    for (let i = 0; i < 1_000_000; i += 10_000) {
      let block = '';
      for (let j = i; j < i + 10_000; j++) block += `c${j}@x.io\n`;
      if (!out.write(block)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise((resolve) => out.end(() => resolve(undefined)));
    try {
      const send = (extra: string) =>
        request(app).post('/api/v1/contacts/imports').set('x-api-key', key).set('Content-Type', 'text/csv').send(Buffer.concat([fs.readFileSync(file), Buffer.from(extra)]));
      const accepted = await send('').expect(202);
      expect(accepted.body.import).to.include({ rows: 1_000_000, status: 'queued' });
      const refused = await send('one@more.io\n').expect(400);
      expect(refused.body.error).to.equal('The file has more than 1,000,000 rows; split it into files of at most 1,000,000');
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
