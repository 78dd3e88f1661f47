import type { Server } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { withTransaction } from '../../src/db/sql/transaction';
import { addTags } from '../../src/services/contacts/contact-operations';
import { SequenceEngine } from '../../src/services/engine/engine';
import { markSent, queueMessages } from '../../src/services/messages/message-store';
import { applyProviderStatuses } from '../../src/services/messages/provider-statuses';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { unenroll } from '../../src/services/sequences/unenroll';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible, launchBrowser, shoot } from '../support/browser';
import { buildUser, PASSWORD, query, dashboardApp, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';
import { manualTimers } from '../support/manual-timers';

// The sequence page's Analytics panel (docs/analytics.md): the per-step funnel and the 30 days,
// from runs the engine moved on its own clock and messages whose statuses a provider reported.

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const STEPS = [
  { id: 'welcome-wait', type: 'wait' as const, duration: 'PT5S' },
  { id: 'tag-welcomed', type: 'tag' as const, add: ['welcomed'] },
  { id: 'one-minute', type: 'wait' as const, duration: 'PT1M' },
  { id: 'done', type: 'exit' as const },
];

function engineAt(start: number) {
  const clock = manualTimers(start);
  const engine = new SequenceEngine(testDb(), { logger: silentLogger, timers: clock.timers, webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 } });
  return { engine, clock };
}

// Six runs: two complete, one waits at two-days, one is unenrolled and one exits at the first
// wait, one is still at the first wait; one sent message delivered and read (its delivery
// reported twice).
async function sequenceWithHistory(accountId: string) {
  const db = testDb();
  const sequence = await createSequence(db, { accountId, name: 'Welcome', status: 'active', steps: STEPS, exitWhen: [{ tag: 'purchased' }] });
  const contacts = [];
  for (const name of ['ada', 'bob', 'cy', 'dee', 'eve', 'fay']) contacts.push(await buildContact(accountId, { email: `${name}@example.com` }));
  const [ada, bob, cy, dee, eve, fay] = contacts;
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [ada!, bob!, dee!, eve!].map((c) => c.id) });
  const start = Date.now() + 1;
  const { engine, clock } = engineAt(start);
  await engine.runUntilIdle();
  await unenroll(db, { accountId, sequenceId: sequence.id, contactIds: [dee!.id] });
  await addTags(db, { accountId, id: eve!.id, tags: ['purchased'] });
  clock.advance(5_001);
  await engine.runUntilIdle();
  // ada and bob go on to the end; cy, enrolled later, waits at one-minute. (Small waits: the
  // engine's clock stays within today, the window's last day.)
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [cy!.id] });
  clock.advance(60_001);
  await engine.runUntilIdle();
  clock.advance(5_001);
  await engine.runUntilIdle();
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: [fay!.id] });

  const now = new Date();
  const ids = await withTransaction(db, (transaction) =>
    queueMessages(db, [{ accountId, contactId: ada!.id, channel: 'whatsapp', messageKey: `msg_${sequence.id}_a`, to: '4915112345678', sequenceId: sequence.id, stepId: 'tag-welcomed' }], { now }, transaction),
  );
  const id = ids.get(`msg_${sequence.id}_a`)!;
  await withTransaction(db, (transaction) => markSent(db, [{ id, providerMessageId: 'wamid.analytics' }], { now }, transaction));
  for (const status of ['delivered', 'delivered', 'read'] as const) {
    await withTransaction(db, (transaction) => applyProviderStatuses(db, [{ channel: 'whatsapp', providerMessageId: 'wamid.analytics', status, at: now }], { now }, transaction));
  }
  return { sequence, cy: cy! };
}

describe('dashboard.sequences.stats and .activity', () => {
  it('answer the API\'s figures within the account, and 404 for another account\'s sequence', async () => {
    const app = dashboardApp();
    const user = await buildUser();
    const cookie = await signInCookie(app, user.email);
    const { sequence } = await sequenceWithHistory(user.accountId);
    const stats = await query(app, `dashboard.sequences.stats?input=${encodeURIComponent(JSON.stringify({ id: sequence.id, days: 7 }))}`, cookie);
    expect(stats.status).to.equal(200);
    expect(stats.body.result.data.stats.days).to.have.length(7);
    const activity = await query(app, `dashboard.sequences.activity?input=${encodeURIComponent(JSON.stringify({ ids: [sequence.id] }))}`, cookie);
    expect(activity.body.result.data.sequences).to.deep.equal([{ sequenceId: sequence.id, runsCompleted: 2, messagesSent: 1 }]);

    const other = await buildTenant();
    const theirs = await createSequence(testDb(), { accountId: other.accountId, name: 'Theirs', status: 'active', steps: STEPS });
    const refused = await query(app, `dashboard.sequences.stats?input=${encodeURIComponent(JSON.stringify({ id: theirs.id }))}`, cookie);
    expect(refused.status).to.equal(404);
    // Another account's ids are left out of the activity, not answered.
    const mixed = await query(app, `dashboard.sequences.activity?input=${encodeURIComponent(JSON.stringify({ ids: [theirs.id, sequence.id] }))}`, cookie);
    expect(mixed.body.result.data.sequences.map((s: { sequenceId: string }) => s.sequenceId)).to.deep.equal([sequence.id]);
    const bad = await query(app, `dashboard.sequences.stats?input=${encodeURIComponent(JSON.stringify({ id: sequence.id, days: 0 }))}`, cookie);
    expect(bad.status).to.equal(400);
  });
});

describe(browserSuite('the sequence page\'s Analytics panel: the funnel and the 30 days'), function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchBrowser(this);
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger });
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

  it('draws each step\'s runs, the days\' figures as charts, text and a table, accessible at both widths', async () => {
    const user = await buildUser();
    const { sequence } = await sequenceWithHistory(user.accountId);
    await page.goto(`${base}/dashboard/sequences/${sequence.id}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const panel = page.getByRole('region', { name: 'Analytics' });
    await panel.getByRole('heading', { name: 'Per step' }).waitFor();
    // How fresh the figures are: counted up to the read (the projection caught up first).
    const asOf = await panel.locator('.analytics-as-of time').getAttribute('datetime');
    expect(Date.now() - Date.parse(asOf!)).to.be.within(0, 60_000);
    expect(await panel.locator('.analytics-as-of').innerText()).to.match(/^Counted up to .+: every change before then is in\.$/);

    const funnel = panel.getByRole('list', { name: 'Per step' });
    const items = await funnel.locator('li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).innerText.replace(/\s*\n\s*/g, ' / ').trim()));
    expect(items).to.deep.equal([
      'welcome-wait wait / 6 reached · 3 completed · 2 skipped · 0 failed · 1 waiting / Skipped: 1 exit rule, 1 unenrolled',
      'tag-welcomed tag / 3 reached · 3 completed · 0 skipped · 0 failed · 0 waiting',
      'one-minute wait / 3 reached · 2 completed · 0 skipped · 0 failed · 1 waiting',
      'done exit / 2 reached · 2 completed · 0 skipped · 0 failed · 0 waiting',
    ]);
    await panel.getByText('In 30 days: 6 enrollments, 2 completions, 2 exits (1 exit rule, 1 unenrolled); messages: 1 sent, 1 delivered, 1 read, 0 failed, 0 bounced, 0 complained.').waitFor();
    // uPlot, loaded with the panel, draws both charts; the canvas is hidden from screen readers.
    await page.waitForFunction(() => document.querySelectorAll('.chart-canvas canvas').length === 2);
    expect(await panel.locator('.chart-canvas').first().getAttribute('aria-hidden')).to.equal('true');

    await panel.getByText('The figures per day, as a table').click();
    const today = new Date().toISOString().slice(0, 10);
    const row = panel.getByRole('row', { name: new RegExp(`^${today}`) });
    const cells = await row.locator('th, td').allInnerTexts();
    expect(cells.map((cell) => cell.replace(/\s*\n\s*/g, ' / '))).to.deep.equal([today, '6', '2', '2 / 1 exit rule, 1 unenrolled', '1', '1', '1', '0', '0', '0']);

    for (const [size, label] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      await page.setViewportSize(size);
      await page.waitForTimeout(100);
      await expectAccessible(page, `analytics (${label})`);
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
      expect(scrollWidth, `analytics (${label}): document width`).to.be.at.most(innerWidth);
      await shoot(page, `sequence-analytics-${label}`);
      await panel.screenshot({ path: path.join('/tmp', `dash-analytics-${label}.png`) });
    }
  });
});
