import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { updateSubscriptions } from '../../src/services/contacts/contact-operations';
import { runImports, type ImportRunSettings } from '../../src/services/imports/run-import';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { silentLogger } from '../support/app';
import { browserSuite, DESKTOP, launchBrowser, lookAtBothWidths } from '../support/browser';
import { buildUser, PASSWORD } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';

// Contacts -> Import in a real browser: a marketer picks a file with a bad row, sees its first
// rows, maps a column the defaults got wrong, adds a tag, chooses a sequence (only active ones
// are offered) and starts; the progress survives a reload mid-way (the background worker's
// batches are driven here by hand), ends with its counts, and the rejected rows download as a
// CSV naming the bad row. The contacts exist, tagged and enrolled; an unsubscribed one stays
// so. Axe and screenshots at 1280x800 and 390x844 (test/support/browser.ts).

describe(browserSuite('the dashboard\'s contact import page in a browser'), function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let dir: string;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchBrowser(this);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-browser-'));
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, imports: { dir } });
    ({ server, base } = await listenOnLoopback(app));
  });
  // Also when launchBrowser skipped the suite (no chromium): then nothing else was set up.
  after(async () => {
    await browser?.close();
    if (server) await closeServer(server);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });
  afterEach(async () => {
    await context?.close();
  });

  // The background worker, one call: at most `maxBatches` batches of `batchSize` rows.
  const work = (overrides: Partial<ImportRunSettings> = {}) =>
    runImports(testDb(), { dir, owner: 'browser-test', batchSize: 500, leaseMs: 60_000, maxBatches: 100, now: async () => new Date(), ...overrides });

  async function signIn(email: string) {
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
  }

  it('imports a file with a bad row: maps a column, adds a tag, enrolls, survives a reload, downloads the rejected rows', async () => {
    const user = await buildUser();
    const welcome = await createSequence(testDb(), { accountId: user.accountId, name: 'Welcome', status: 'active' });
    await createSequence(testDb(), { accountId: user.accountId, name: 'Old newsletter', status: 'paused' });
    const kept = await buildContact(user.accountId, { email: 'kept@example.com', tags: ['old'] });
    await updateSubscriptions(testDb(), { accountId: user.accountId, id: kept.id, emailSubscriptionStatus: 'unsubscribed' });
    const file = path.join(dir, 'spring-fair.csv');
    fs.writeFileSync(
      file,
      'E-mail,Given name,Email subscription\r\n' +
        'ada@example.com,Ada,subscribed\r\n' +
        'grace@example.com,Grace,\r\n' +
        'not-an-address,Bob,\r\n' +
        'kept@example.com,Kept,subscribed\r\n' +
        'linus@example.com,Linus,\r\n',
    );

    await signIn(user.email);
    await page.getByRole('link', { name: 'Import contacts' }).click();
    await page.getByRole('heading', { name: 'Import contacts', level: 1 }).waitFor();
    await page.getByLabel('CSV file').setInputFiles(file);
    const preview = page.getByRole('table', { name: 'First rows of spring-fair.csv' });
    await preview.getByRole('row', { name: /not-an-address/ }).waitFor();
    // "Given name" is no field's name: by default it would be a custom field.
    const given = page.getByLabel('Column “Given name”');
    expect(await given.inputValue()).to.equal('customFields.Given name');
    expect(await page.getByLabel('Column “E-mail”').inputValue()).to.equal('email');
    await given.selectOption({ label: 'First name' });
    expect(await page.getByLabel('Column “Email subscription”').inputValue()).to.equal('customFields.Email subscription');
    await page.getByLabel('Column “Email subscription”').selectOption({ label: 'Email subscription' });
    await page.getByLabel('Tags to add').fill('spring-fair, 2026');
    const sequences = await page.getByLabel('Enroll into sequence').locator('option').allTextContents();
    expect(sequences).to.deep.equal(['None', 'Welcome']);
    await page.getByLabel('Enroll into sequence').selectOption({ label: 'Welcome' });
    await page.getByText('Then a subscription column that says “subscribed” resubscribes a contact who had unsubscribed').waitFor();
    expect(await page.getByLabel('These people opted in').isChecked()).to.equal(false);
    await lookAtBothWidths(page, 'contact-import-mapping');

    await page.getByRole('button', { name: 'Start import' }).click();
    await page.getByText('0 of 5 rows (0 %)').waitFor();
    const id = new URL(page.url()).searchParams.get('id');
    expect(id).to.be.a('string');
    await page.getByText('Waiting to start').waitFor();

    // Two rows committed, then a reload: the page finds the import by the id in its address.
    await work({ batchSize: 2, maxBatches: 1 });
    await page.reload();
    await page.getByText('2 of 5 rows (40 %)').waitFor();
    await page.getByText('Importing').waitFor();
    await page.getByRole('button', { name: 'Cancel import' }).waitFor();
    await lookAtBothWidths(page, 'contact-import-running');

    // The rest: the page, asking every second, sees the end by itself.
    while (await work());
    await page.getByText('5 of 5 rows (100 %)').waitFor();
    await page.getByText('Completed').waitFor();
    const counts = page.getByRole('definition');
    expect(await counts.allTextContents()).to.deep.equal(['3', '1', '1', '4']);
    expect(await page.getByRole('term').allTextContents()).to.deep.equal(['Inserted', 'Updated', 'Failed', 'Enrolled']);
    expect(await page.getByRole('button', { name: 'Cancel import' }).count()).to.equal(0);
    await lookAtBothWidths(page, 'contact-import-completed');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download rejected rows (CSV)' }).click()]);
    const rejected = fs.readFileSync((await download.path())!, 'utf8').split('\r\n');
    expect(rejected[0]).to.equal('row,reason,E-mail,Given name,Email subscription');
    expect(rejected[1]).to.match(/^3,"""E-mail"" \(email\): [^"]+",not-an-address,Bob,$/);
    expect(rejected.filter((line) => line !== '')).to.have.length(2);

    const contacts = await select<{ email: string; first_name: string; email_subscription_status: string; id: string }>(
      testDb(),
      'SELECT id, email, first_name, email_subscription_status FROM contacts WHERE account_id = ? ORDER BY email',
      [user.accountId],
    );
    expect(contacts.map(({ email, first_name, email_subscription_status }) => [email, first_name, email_subscription_status])).to.deep.equal([
      ['ada@example.com', 'Ada', 'subscribed'],
      ['grace@example.com', 'Grace', 'subscribed'],
      // Not ticked "opted in": the file's "subscribed" does not resubscribe.
      ['kept@example.com', 'Kept', 'unsubscribed'],
      ['linus@example.com', 'Linus', 'subscribed'],
    ]);
    const tags = await select<{ email: string; tag: string }>(
      testDb(),
      'SELECT c.email, t.tag FROM contact_tags t JOIN contacts c ON c.id = t.contact_id WHERE c.account_id = ? ORDER BY c.email, t.tag',
      [user.accountId],
    );
    expect(tags.filter((t) => t.email === 'kept@example.com').map((t) => t.tag)).to.deep.equal(['2026', 'old', 'spring-fair']);
    expect(tags.filter((t) => t.tag === 'spring-fair').map((t) => t.email)).to.deep.equal(['ada@example.com', 'grace@example.com', 'kept@example.com', 'linus@example.com']);
    const runs = await select<{ contact_id: string }>(testDb(), 'SELECT contact_id FROM sequence_runs WHERE sequence_id = ?', [welcome.id]);
    expect(runs.map((r) => r.contact_id).sort()).to.deep.equal(contacts.map((c) => c.id).sort());
  });

  it('says at the file when it is not CSV, and cancels an import that has not ended', async () => {
    const user = await buildUser();
    await signIn(user.email);
    await page.goto(`${base}/dashboard/contacts/import`);
    const binary = path.join(dir, 'photo.csv');
    fs.writeFileSync(binary, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]));
    await page.getByLabel('CSV file').setInputFiles(binary);
    await page.getByText('The file is not CSV text (it holds binary data; save it as CSV, UTF-8)').waitFor();
    expect(await page.getByLabel('CSV file').getAttribute('aria-invalid')).to.equal('true');
    await lookAtBothWidths(page, 'contact-import-not-csv');

    const list = path.join(dir, 'list.csv');
    fs.writeFileSync(list, 'email\nada@example.com\nbob@example.com\nceline@example.com\n');
    await page.getByLabel('CSV file').setInputFiles(list);
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.getByText('0 of 3 rows (0 %)').waitFor();
    await work({ batchSize: 1, maxBatches: 1 });
    await page.getByText('1 of 3 rows (33 %)').waitFor();
    await page.getByRole('button', { name: 'Cancel import' }).click();
    await page.getByText('Cancelled').waitFor();
    expect(await work()).to.equal(false);
    const rows = await select<{ email: string }>(testDb(), 'SELECT email FROM contacts WHERE account_id = ?', [user.accountId]);
    expect(rows.map((r) => r.email)).to.deep.equal(['ada@example.com']);
  });
});
