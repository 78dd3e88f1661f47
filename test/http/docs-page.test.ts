import fs from 'node:fs';
import type { Server } from 'node:http';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { testApp } from '../support/app';
import { buildContact, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';

// GET /docs in a real browser (Debian's chromium, headless): the reference renders from the
// served document, and "Try it out" calls this same server with the key the reader gives.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface DocsWindow {
  ui: { preauthorizeApiKey(scheme: string, value: string): void };
}

const TITLE = fs.existsSync(CHROMIUM)
  ? 'docs page (/docs) in a browser'
  : `docs page (/docs) in a browser (skipped: no ${CHROMIUM} here; apt-get install chromium, as .ci/run does)`;

describe(TITLE, function () {
  this.timeout(90_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let page: Page;
  let requested: string[];

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
      this.skip();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    ({ server, base } = await listenOnLoopback(testApp()));
  });

  after(async () => {
    await browser?.close();
    await closeServer(server);
  });

  beforeEach(async () => {
    page = await browser.newPage();
    requested = [];
    page.on('request', (req) => requested.push(req.url()));
  });
  afterEach(async () => {
    await page?.close();
  });

  async function openDocs() {
    const response = await page.goto(`${base}/docs`);
    expect(response?.status()).to.equal(200);
    await page.locator('.opblock').first().waitFor();
  }

  it('renders every operation of the document, under its tags', async () => {
    await openDocs();
    const operations = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
        const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method} ${path}`;
      }),
    );
    const served = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as { paths: Record<string, object> };
    const served2 = served as { paths: Record<string, object>; webhooks?: Record<string, object> };
    // OpenAPI 3.1 webhooks (what the service POSTs to receivers) render as `POST <name>`.
    const documented = [served2.paths, served2.webhooks ?? {}].flatMap((items) =>
      Object.entries(items).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    expect(operations).to.have.members(documented);
    expect(operations).to.include('POST /contacts/upsert').and.include('POST /sequences/{id}/trigger');

    const tags = await page.$$eval('.opblock-tag', (els) => els.map((el) => el.getAttribute('data-tag')));
    expect(tags).to.have.members(['Contacts', 'Sequences', 'Activities', 'Events', 'Channels', 'Webhooks', 'Suppressions']);
    const text = await page.locator('body').innerText();
    expect(text).to.include('Create or update a contact by email').and.include('Upsert a contact and enroll it');
  });

  it('loads nothing from other hosts', async () => {
    await openDocs();
    expect(requested.length).to.be.greaterThan(1);
    expect(requested.filter((url) => !url.startsWith(`${base}/`))).to.deep.equal([]);
  });

  it('executes "Try it out" against the same server with the key the reader authorizes', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { firstName: 'Ada' });
    await openDocs();
    await page.waitForFunction(() => Boolean((window as unknown as Partial<DocsWindow>).ui));
    await page.evaluate((value) => (window as unknown as DocsWindow).ui.preauthorizeApiKey('ApiKey', value), key);

    const operation = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path[data-path="/contacts/{id}"]') }).filter({
      has: page.locator('.opblock-summary-method', { hasText: /^GET$/ }),
    });
    await operation.locator('.opblock-summary').first().click();
    const tryItOut = operation.locator('button.try-out__btn', { hasText: 'Try it out' });
    if (await tryItOut.count()) await tryItOut.click();
    await operation.locator('input[placeholder="id"]').fill(contact.id);
    await operation.locator('button.execute').click();

    const status = operation.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor();
    expect((await status.first().innerText()).trim()).to.equal('200');
    const body = await operation.locator('.live-responses-table .response .response-col_description').first().innerText();
    expect(body).to.include(contact.email).and.include('Ada');
    const url = await operation.locator('.request-url pre').first().innerText();
    expect(url.trim()).to.equal(`${base}/api/v1/contacts/${contact.id}`);
    expect(requested).to.include(`${base}/api/v1/contacts/${contact.id}`);
  });

  it('shows the 401 the service answers when no key is authorized', async () => {
    await openDocs();
    const operation = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path[data-path="/contacts/by-email/{email}"]') });
    await operation.locator('.opblock-summary').first().click();
    const tryItOut = operation.locator('button.try-out__btn', { hasText: 'Try it out' });
    if (await tryItOut.count()) await tryItOut.click();
    await operation.locator('input[placeholder="email"]').fill('nobody@example.com');
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status');
    await status.first().waitFor();
    expect((await status.first().innerText()).trim()).to.equal('401');
    expect(await operation.locator('.live-responses-table .response .response-col_description').first().innerText()).to.include(
      'Missing x-api-key header',
    );
  });
});
