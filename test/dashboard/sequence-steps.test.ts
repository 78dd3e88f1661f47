import type { Server } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { addTags } from '../../src/services/contacts/contact-operations';
import { SequenceEngine } from '../../src/services/engine/engine';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { createSequence, updateSequence } from '../../src/services/sequences/sequence-admin';
import { unenroll } from '../../src/services/sequences/unenroll';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible, launchBrowser, shoot } from '../support/browser';
import { buildUser, dashboardApp, PASSWORD, query, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';
import { manualTimers } from '../support/manual-timers';

// Where a sequence's runs are: the active runs at each version and step (the grouped count the
// builder's live save shows), and on the sequence page each run's step in the runs table, and
// every kind of step in words on the builder's cards (the read-only Steps panel that repeated
// them is gone: issue 37, item 6). The runs are put at their steps by the engine itself, on its
// own clock (nothing waits for real).

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const WEBHOOKS = { allowInsecure: true, now: () => new Date() };

// Version 1: a vip goes to vip-wait, anyone else is tagged and waits at trial-wait.
const STEPS_V1 = [
  { id: 'check-vip', type: 'branch' as const, if: { tag: 'vip' }, then: 'vip-wait', else: 'trial-tag' },
  { id: 'trial-tag', type: 'tag' as const, add: ['trial'], remove: ['lead'] },
  { id: 'trial-wait', type: 'wait' as const, duration: 'P3D' },
  { id: 'vip-wait', type: 'wait' as const, duration: 'PT2H' },
  { id: 'plan', type: 'update' as const, customFields: { plan: 'pro' } },
  { id: 'done', type: 'exit' as const },
];
// Version 2: the trial waits two days instead.
const STEPS_V2 = STEPS_V1.map((step) => (step.id === 'trial-wait' ? { ...step, duration: 'P2D' } : step));

// One pass of the engine until nothing more is due now: every run goes as far as it can.
async function engineSettles() {
  const clock = manualTimers(Date.now() + 1);
  const engine = new SequenceEngine(testDb(), {
    logger: silentLogger,
    timers: clock.timers,
    webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 },
  });
  await engine.runUntilIdle();
}

// An account whose sequence has runs at different steps of two versions, and cancelled ones.
async function sequenceWithRunsAtSteps(accountId: string) {
  const db = testDb();
  const sequence = await createSequence(db, {
    accountId,
    name: 'Onboarding',
    status: 'active',
    steps: STEPS_V1,
    exitWhen: [{ tag: 'purchased' }],
  });
  const contact = (email: string, tags: string[] = []) => buildContact(accountId, { email, tags });
  const vip = await contact('vera.vip@example.com', ['vip']);
  const trials = [await contact('tom.trial@example.com', ['lead']), await contact('tess.trial@example.com')];
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [vip.id, ...trials.map((c) => c.id)] });
  await engineSettles();

  // A new version: the runs above stay on version 1; the next ones start on version 2.
  await updateSequence(db, { accountId, id: sequence.id, steps: STEPS_V2 });
  const later = [await contact('liam.later@example.com'), await contact('lena.later@example.com')];
  const leaving = await contact('uma.unenrolled@example.com');
  const buyer = await contact('pat.purchased@example.com');
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [...later, leaving, buyer].map((c) => c.id) });
  await engineSettles();
  await unenroll(db, { accountId, sequenceId: sequence.id, contactIds: [leaving.id] });
  await addTags(db, { accountId, id: buyer.id, tags: ['purchased'] });
  await engineSettles();
  // Enrolled after the last pass: pending at the first step.
  const newcomer = await contact('nina.new@example.com');
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [newcomer.id] });
  return sequence;
}

describe('dashboard.sequences.positions', () => {
  let app: Express;
  let cookie: string;
  let accountId: string;

  const positions = (id: string, as = cookie) => query(app, `dashboard.sequences.positions?input=${encodeURIComponent(JSON.stringify({ id }))}`, as);

  beforeEach(async () => {
    app = dashboardApp();
    const user = await buildUser();
    accountId = user.accountId;
    cookie = await signInCookie(app, user.email);
  });

  it('counts the active runs at each version and step, ended runs left out', async () => {
    const sequence = await sequenceWithRunsAtSteps(accountId);
    const res = await positions(sequence.id);
    expect(res.status).to.equal(200);
    expect(res.body.result.data.positions).to.deep.equal([
      { version: 2, stepId: 'check-vip', activeRuns: 1 },
      { version: 2, stepId: 'trial-wait', activeRuns: 2 },
      { version: 1, stepId: 'trial-wait', activeRuns: 2 },
      { version: 1, stepId: 'vip-wait', activeRuns: 1 },
    ]);
  });

  it('is empty for a sequence without active runs, and 404 for one that is unknown, another account\'s or not an id', async () => {
    const idle = await createSequence(testDb(), { accountId, name: 'Idle', steps: [{ id: 'only', type: 'exit' }] });
    const res = await positions(idle.id);
    expect(res.status).to.equal(200);
    expect(res.body.result.data.positions).to.deep.equal([]);

    const other = await buildTenant();
    const theirs = await createSequence(testDb(), { accountId: other.accountId, name: 'Theirs', status: 'active', steps: [{ id: 'w', type: 'wait', duration: 'P1D' }] });
    await enrollByIds(testDb(), { accountId: other.accountId, sequenceId: theirs.id, contactIds: [(await buildContact(other.accountId)).id] });
    for (const id of [theirs.id, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const refused = await positions(id);
      expect(refused.status, id).to.equal(404);
      expect(refused.body.error.message, id).to.equal('Sequence not found');
    }
    expect((await positions(idle.id, '')).status, 'without a session').to.equal(401);
  });
});

describe(browserSuite('the sequence page: its steps in words and each run\'s step'), function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchBrowser(this);
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, webhooks: WEBHOOKS });
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

  async function openSequence(email: string, id: string) {
    await page.goto(`${base}/dashboard/sequences/${id}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Builder', level: 2 }).waitFor();
  }

  // The document never scrolls sideways; what does not fit scrolls inside its own box.
  async function expectFits(what: string) {
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
    expect(scrollWidth, `${what}: document width at ${innerWidth} px`).to.be.at.most(innerWidth);
  }

  // Checked and photographed at 1280x800 and 390x844, into the suite's directory and
  // /tmp/dash-steps-<name>-<width>.png.
  async function look(name: string) {
    for (const [size, label] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      await page.setViewportSize(size);
      await expectAccessible(page, `${name} (${label})`);
      await expectFits(`${name} (${label})`);
      await shoot(page, `sequence-${name}-${label}`);
      await page.screenshot({ path: path.join('/tmp', `dash-steps-${name}-${label}.png`), fullPage: true });
      await page.getByRole('region', { name: 'Builder', exact: true }).screenshot({ path: path.join('/tmp', `dash-steps-${name}-${label}-builder.png`) });
      // The runs table scrolls inside its own box: scrolled to its end, the Step column is in view.
      const table = page.getByRole('group', { name: 'Runs of this sequence, newest first' });
      if ((await table.count()) === 1) {
        await table.evaluate((box) => box.scrollTo({ left: box.scrollWidth }));
        const cell = await table.locator('tbody tr td').last().boundingBox();
        expect(cell!.x + cell!.width, `${name} (${label}): the Step column within the screen`).to.be.at.most(size.width);
        await page.getByRole('region', { name: 'Runs', exact: true }).screenshot({ path: path.join('/tmp', `dash-steps-${name}-${label}-runs.png`) });
        await table.evaluate((box) => box.scrollTo({ left: 0 }));
      }
    }
    await page.setViewportSize(DESKTOP);
  }

  it("shows each run's step in the runs table: its version when older, why a cancelled run ended", async () => {
    const user = await buildUser();
    const sequence = await sequenceWithRunsAtSteps(user.accountId);
    await openSequence(user.email, sequence.id);

    // The runs table: each run's step, its version when older, why a cancelled run ended.
    const runs = page.getByRole('region', { name: 'Runs' });
    await runs.getByRole('link', { name: 'nina.new@example.com', exact: true }).waitFor();
    expect(await runs.locator('thead th').allInnerTexts()).to.deep.equal(['Contact', 'Status', 'Started', 'Ended', 'Step', 'Run']);
    const rows = await runs.locator('tbody tr').evaluateAll((trs) =>
      Object.fromEntries(
        trs.map((tr) => {
          const cells = [...tr.children] as HTMLElement[];
          return [cells[0]!.innerText, `${cells[1]!.innerText} | ${cells[4]!.innerText.replace(/\s*\n\s*/g, ' / ')}`];
        }),
      ),
    );
    expect(rows).to.deep.equal({
      'nina.new@example.com': 'Pending | check-vip',
      'pat.purchased@example.com': 'Cancelled | Stopped at trial-wait / exitWhen: the contact got the tag "purchased"',
      'uma.unenrolled@example.com': 'Cancelled | Stopped at trial-wait / unenrolled',
      'lena.later@example.com': 'Running | trial-wait',
      'liam.later@example.com': 'Running | trial-wait',
      'tess.trial@example.com': 'Running | trial-wait / version 1',
      'tom.trial@example.com': 'Running | trial-wait / version 1',
      'vera.vip@example.com': 'Running | vip-wait / version 1',
    });
    await look('counts');
  });

  it("says every kind of step in words on the builder's cards; a sequence without steps says to add one", async () => {
    const user = await buildUser();
    const { webhook } = await createWebhook(testDb(), { accountId: user.accountId, url: 'http://hooks.example.test/crm/receive', events: ['webhook.test'] }, WEBHOOKS);
    const sequence = await createSequence(testDb(), {
      accountId: user.accountId,
      name: 'Every kind of step',
      steps: [
        { id: 'morning', type: 'wait', until: { time: '09:00', weekdays: ['fri', 'mon', 'tue', 'wed', 'thu'] } },
        { id: 'mark', type: 'tag', add: ['vip', 'gold'], remove: ['trial'] },
        { id: 'profile', type: 'update', customFields: { plan: 'pro', address: { city: 'Paris' } } },
        { id: 'tell-crm', type: 'webhook', endpointId: webhook.id, payload: { campaign: 'welcome' } },
        { id: 'hello', type: 'email', subject: 'Welcome, {{ contact.firstName | default: "friend" }}', html: '<p>Hi</p>' },
        { id: 'ping', type: 'whatsapp', template: { name: 'order_update', language: { code: 'en_US' } } },
        { id: 'is-pro', type: 'branch', if: { field: 'plan', equals: 'pro' }, then: 'pro-exit', else: 'opted-out' },
        { id: 'opted-out', type: 'branch', if: { channel: 'email', status: 'unsubscribed' }, then: 'pro-exit', else: 'pro-exit' },
        { id: 'pro-exit', type: 'exit' },
      ],
      exitWhen: [{ unsubscribed: 'email' }, { tag: 'purchased' }],
      sendingWindow: { timeZone: 'Europe/Paris', useContactTimeZone: true, weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
    });
    await openSequence(user.email, sequence.id);
    const builder = page.getByRole('region', { name: 'Builder' });
    await builder.getByText(`POST to http://hooks.example.test/crm/receive`).waitFor();
    expect(await builder.locator('.flow-card .step-what').allTextContents()).to.deep.equal([
      "Wait until 09:00 on Mon–Fri (the contact's time zone, else Europe/Paris)",
      'Add tags vip, gold; remove tag trial',
      'Update custom fields plan, address.city',
      'POST to http://hooks.example.test/crm/receive',
      'Email "Welcome, [first name]"',
      'WhatsApp template order_update (en_US)',
      'If plan is "pro" go to pro-exit, else opted-out',
      'If email subscription is unsubscribed go to pro-exit, else pro-exit',
      'Exit',
    ]);
    await look('words');

    const bare = await createSequence(testDb(), { accountId: user.accountId, name: 'Moved by the runner', status: 'active' });
    await enrollByIds(testDb(), { accountId: user.accountId, sequenceId: bare.id, contactIds: [(await buildContact(user.accountId, { email: 'rita.runner@example.com' })).id] });
    await page.goto(`${base}/dashboard/sequences/${bare.id}`);
    await page.getByRole('link', { name: 'rita.runner@example.com', exact: true }).waitFor();
    await builder.getByText('No steps yet: add the first below.', { exact: false }).waitFor();
    expect(await builder.locator('.flow-card').count(), 'no step cards').to.equal(0);
    const stepCell = page.getByRole('region', { name: 'Runs' }).locator('tbody tr td.step-cell');
    expect(await stepCell.locator('.none').count(), 'a blank step: the dash read as none').to.equal(1);
    await look('no-steps');
  });
});
