import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { runImports } from '../../src/services/imports/run-import';
import { silentLogger } from '../support/app';
import { buildUser, mutate, ORIGIN, query, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';

// dashboard.contacts.imports.*: the preview (the import's parser and default fields, nothing
// stored), the text/csv upload behind the session (the API's streaming upload), progress,
// cancel and the rejected rows' CSV, always within the signed-in account.

const input = (value: unknown) => `?input=${encodeURIComponent(JSON.stringify(value))}`;

describe('dashboard contact import procedures', () => {
  let dir: string;
  let app: Express;
  let cookie: string;
  let user: Awaited<ReturnType<typeof buildUser>>;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-imports-'));
    app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000, publicOrigin: ORIGIN },
      logger: silentLogger,
      imports: { dir },
    });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    user = await buildUser();
    cookie = await signInCookie(app, user.email);
  });

  const upload = (csv: string, query = '', who: { cookie?: string; origin?: string; type?: string } = { cookie }) => {
    const test = request(app).post(`/trpc/dashboard.contacts.imports.upload${query}`).set('content-type', who.type ?? 'text/csv');
    if (who.origin !== '') test.set('origin', who.origin ?? ORIGIN);
    if (who.cookie) test.set('cookie', who.cookie);
    return test.send(Buffer.from(csv));
  };
  const imports = (accountId: string) => select<{ id: string }>(testDb(), 'SELECT id FROM contact_imports WHERE account_id = ?', [accountId]);
  const drain = async () => {
    const settings = { dir, owner: 'test', batchSize: 500, leaseMs: 60_000, maxBatches: 100, now: async () => new Date() };
    while (await runImports(testDb(), settings));
  };

  it('previews the first rows with the API\'s default fields and stores nothing', async () => {
    const text = '\uFEFFE-mail;First Name;Plan\r\nada@example.com;"Ada; Countess";pro\r\ngrace@example.com;Grace;basic\r\ncut-off@exa';
    const res = await mutate(app, 'dashboard.contacts.imports.preview', { text, complete: false }, cookie);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.preview).to.deep.equal({
      delimiter: ';',
      columns: [
        { header: 'E-mail', field: 'email' },
        { header: 'First Name', field: 'firstName' },
        { header: 'Plan', field: 'customFields.Plan' },
      ],
      // The row the head cuts is left out.
      rows: [
        ['ada@example.com', 'Ada; Countess', 'pro'],
        ['grace@example.com', 'Grace', 'basic'],
      ],
    });
    const whole = await mutate(app, 'dashboard.contacts.imports.preview', { text: 'email\nlast@example.com', complete: true }, cookie);
    expect(whole.body.result.data.preview.rows).to.deep.equal([['last@example.com']]);
    expect(await imports(user.accountId)).to.deep.equal([]);
  });

  it('refuses a file that is not CSV at the file field', async () => {
    const res = await mutate(app, 'dashboard.contacts.imports.preview', { text: 'PK\u0003\u0004\u0000\u0000binary', complete: true }, cookie);
    expect(res.status).to.equal(400);
    expect(res.body.error.data.details).to.deep.equal([{ path: 'file', message: 'The file is not CSV text (it holds binary data; save it as CSV, UTF-8)' }]);
    const empty = await mutate(app, 'dashboard.contacts.imports.preview', { text: '', complete: true }, cookie);
    expect(empty.body.error.data.details[0].path).to.equal('file');
  });

  it('uploads a file with its mapping, tags and sequence, follows it, and downloads the rejected rows', async () => {
    const sequence = await buildSequence(user.accountId, 'active');
    const mapping = encodeURIComponent(JSON.stringify({ 'E-mail': 'email', Name: 'firstName', Notes: null }));
    const res = await upload('E-mail,Name,Notes\nada@example.com,Ada,x\nnot-an-email,Bob,y\n', `?mapping=${mapping}&tags=imported&sequenceId=${sequence.id}&fileName=list.csv`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const created = res.body.result.data.import;
    expect(created).to.include({ status: 'queued', rows: 2, fileName: 'list.csv', sequenceId: sequence.id, optedIn: false });
    expect(created.tags).to.deep.equal(['imported']);
    await drain();
    const followed = await query(app, `dashboard.contacts.imports.get${input({ id: created.id })}`, cookie);
    expect(followed.body.result.data.import).to.include({ status: 'completed', processed: 2, inserted: 1, failed: 1, enrolled: 1 });
    const [ada] = await select<{ first_name: string }>(testDb(), 'SELECT first_name FROM contacts WHERE account_id = ? AND email_normalized = ?', [user.accountId, 'ada@example.com']);
    expect(ada).to.deep.equal({ first_name: 'Ada' });
    const errors = await query(app, `dashboard.contacts.imports.errorsCsv?id=${created.id}`, cookie);
    expect(errors.status).to.equal(200);
    expect(errors.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(errors.text.split('\r\n')[0]).to.equal('row,reason,E-mail,Name,Notes');
    expect(errors.text.split('\r\n')[1]).to.match(/^2,"""E-mail"" \(email\): .*",not-an-email,Bob,y$/);
    const listed = await query(app, `dashboard.contacts.imports.list`, cookie);
    expect(listed.body.result.data.imports.map((i: { id: string }) => i.id)).to.deep.equal([created.id]);
  });

  it('refuses a bad mapping at its field, a paused sequence, and a body that is not text/csv, keeping nothing', async () => {
    const mapping = encodeURIComponent(JSON.stringify({ Email: 'mail' }));
    const bad = await upload('Email\nada@example.com\n', `?mapping=${mapping}`);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.data.details[0]).to.deep.include({ path: 'mapping.Email' });
    const noEmail = await upload('Name\nAda\n');
    expect(noEmail.status).to.equal(400);
    expect(noEmail.body.error.data.details[0].path).to.equal('mapping.email');
    const paused = await buildSequence(user.accountId, 'paused');
    expect((await upload('email\nada@example.com\n', `?sequenceId=${paused.id}`)).status).to.equal(409);
    expect((await upload('email\nada@example.com\n', '', { cookie, type: 'text/plain' })).status).to.equal(415);
    expect(await imports(user.accountId)).to.deep.equal([]);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.part'))).to.deep.equal([]);
  });

  it('takes a session only: no session, an API key or another site is refused', async () => {
    const other = await buildTenant();
    expect((await upload('email\na@x.io\n', '', {})).status).to.equal(401);
    const byKey = await request(app).post('/trpc/dashboard.contacts.imports.upload').set('origin', ORIGIN).set('content-type', 'text/csv').set('x-api-key', other.key).send('email\na@x.io\n');
    expect(byKey.status).to.equal(401);
    expect((await upload('email\na@x.io\n', '', { cookie, origin: 'https://evil.example' })).status).to.equal(403);
    expect(await imports(user.accountId)).to.deep.equal([]);
    // Another account's import is not found.
    const theirs = await request(app).post('/api/v1/contacts/imports').set('x-api-key', other.key).set('content-type', 'text/csv').send('email\na@x.io\n');
    expect(theirs.status).to.equal(202);
    expect((await query(app, `dashboard.contacts.imports.get${input({ id: theirs.body.import.id })}`, cookie)).status).to.equal(404);
    expect((await query(app, `dashboard.contacts.imports.errorsCsv?id=${theirs.body.import.id}`, cookie)).status).to.equal(404);
    expect((await mutate(app, 'dashboard.contacts.imports.cancel', { id: theirs.body.import.id }, cookie)).status).to.equal(404);
  });

  it('cancels a queued import', async () => {
    const res = await upload('email\na@x.io\n');
    const cancelled = await mutate(app, 'dashboard.contacts.imports.cancel', { id: res.body.result.data.import.id }, cookie);
    expect(cancelled.body.result.data.import.status).to.equal('cancelled');
  });
});
