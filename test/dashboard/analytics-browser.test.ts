import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { execute, select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { addTags } from '../../src/services/contacts/contact-operations';
import { SequenceEngine } from '../../src/services/engine/engine';
import { markSent, queueMessages } from '../../src/services/messages/message-store';
import { applyProviderStatuses } from '../../src/services/messages/provider-statuses';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { unenroll } from '../../src/services/sequences/unenroll';
import { silentLogger } from '../support/app';
import { browserSuite, DESKTOP, expectAccessible, PHONE, serveDashboard, shoot } from '../support/browser';
import { buildUser, PASSWORD, query, dashboardApp, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { manualTimers } from '../support/manual-timers';

// The sequence page's Analytics panel (docs/analytics.md): the per-step funnel and the 30 days,
// from runs the engine moved on its own clock and messages whose statuses a provider reported.


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

// A sequence with a goal, a split and a wait_for step, moved by the engine: each of five runs
// takes the variant the split chooses for it; variant a waits for a checkout and times out,
// variant b (the holdout) exits. Then the first run of each variant meets the goal (the goal
// writer is another suite's; here the row it leaves: completed, reason goal_met).
const BEHAVIOUR_STEPS = [
  { id: 'offer', type: 'split' as const, variants: [{ id: 'a', weight: 1, next: 'checkout' }, { id: 'b', weight: 1, next: 'done' }] },
  { id: 'checkout', type: 'wait_for' as const, activity: 'checkout_completed', timeout: 'PT1S', onTimeout: 'done' },
  { id: 'done', type: 'exit' as const },
];

async function sequenceWithConversions(accountId: string) {
  const db = testDb();
  const sequence = await createSequence(db, { accountId, name: 'Cart', status: 'active', steps: BEHAVIOUR_STEPS, goal: { activity: 'order_placed' } });
  const contacts = [];
  for (const name of ['gus', 'hal', 'ida', 'jo', 'kit']) contacts.push(await buildContact(accountId, { email: `${name}@example.com` }));
  await enrollByIds(db, { accountId, sequenceId: sequence.id, contactIds: contacts.map((c) => c.id) });
  const { engine, clock } = engineAt(Date.now() + 1);
  await engine.runUntilIdle();
  clock.advance(1_001);
  await engine.runUntilIdle();
  const splits = await select<{ run_id: string; detail: string }>(
    db,
    "SELECT e.run_id, e.detail FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id WHERE r.sequence_id = ? AND e.step_id = 'offer' ORDER BY e.run_id",
    [sequence.id],
  );
  const runsOf = (variant: string) => splits.filter((row) => JSON.parse(row.detail).variant === variant).map((row) => row.run_id);
  const variants = { a: runsOf('a'), b: runsOf('b') };
  const converted = [variants.a[0], variants.b[0]].filter((id): id is string => id !== undefined);
  await execute(db, "UPDATE sequence_runs SET reason = 'goal_met' WHERE id IN (?) AND status = 'completed'", [converted]);
  return { sequence, a: variants.a.length, b: variants.b.length, convertedA: Math.min(1, variants.a.length), convertedB: Math.min(1, variants.b.length) };
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
  const dashboard = serveDashboard(() =>
    createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger }),
  );
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  it('draws each step\'s runs, the days\' figures as charts, text and a table, accessible at both widths', async () => {
    const user = await buildUser();
    const { sequence } = await sequenceWithHistory(user.accountId);
    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}`);
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
    // No goal, split or wait_for step: none of their figures.
    expect(await panel.getByText(/converted/).count()).to.equal(0);
    expect(await panel.getByRole('heading', { name: /Split variants|Waits for an activity/ }).count()).to.equal(0);
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

  it('shows the conversions in the funnel and per day, the split variants and how the waits ended, accessible at both widths', async () => {
    const user = await buildUser();
    const { sequence, a, b, convertedA, convertedB } = await sequenceWithConversions(user.accountId);
    const total = convertedA + convertedB;
    const rate = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toLocaleString('en', { maximumFractionDigits: 1 })}%`);
    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const panel = page.getByRole('region', { name: 'Analytics' });
    await panel.getByRole('heading', { name: 'Per step' }).waitFor();
    expect((await panel.locator('.conversions-summary').innerText()).trim()).to.equal(`${total} ${total === 1 ? 'run' : 'runs'} converted in 30 days, by meeting the goal: order_placed.`);

    const funnel = panel.getByRole('list', { name: 'Per step' });
    const items = await funnel.locator('li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).innerText.replace(/\s*\n\s*/g, ' / ').trim()));
    expect(items).to.deep.equal([
      `offer split / 5 reached · 5 completed · 0 skipped · 0 failed · 0 waiting · ${total} converted after it`,
      `checkout wait_for / ${a} reached · ${a} completed · 0 skipped · 0 failed · 0 waiting · ${convertedA} converted after it`,
      `done exit / 5 reached · 5 completed · 0 skipped · 0 failed · 0 waiting · ${total} converted after it`,
    ]);

    const rowsOf = async (name: string) =>
      panel.getByRole('group', { name }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as HTMLElement).innerText.trim())));
    await panel.getByRole('heading', { name: 'Split step offer' }).waitFor();
    expect(await rowsOf('Split step offer: runs per variant, and those that converted')).to.deep.equal([
      ['a', `${a}`, `${convertedA}`, rate(convertedA, a)],
      ['b', `${b}`, `${convertedB}`, rate(convertedB, b)],
    ]);
    expect(await rowsOf('Waits for an activity: how they ended')).to.deep.equal([['checkout', '0', a > 0 ? `${a} (100%)` : '0']]);
    await panel.getByText(new RegExp(`^In 30 days: 5 enrollments, 5 completions \\(${total} converted\\), 0 exits; messages:`)).waitFor();

    await panel.getByText('The figures per day, as a table').click();
    const today = new Date().toISOString().slice(0, 10);
    const row = panel.getByRole('row', { name: new RegExp(`^${today}`) });
    expect((await row.locator('th, td').allInnerTexts()).slice(0, 5)).to.deep.equal([today, '5', '5', `${total}`, '0']);
    await page.waitForFunction(() => document.querySelectorAll('.chart-canvas canvas').length === 2);
    expect(await panel.locator('figure.chart').first().locator('.legend li').allInnerTexts()).to.deep.equal(['Enrollments', 'Completions', 'Exits', 'Conversions']);

    for (const [size, label] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      await page.setViewportSize(size);
      await page.waitForTimeout(100);
      await expectAccessible(page, `analytics with conversions (${label})`);
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
      expect(scrollWidth, `analytics with conversions (${label}): document width`).to.be.at.most(innerWidth);
      await shoot(page, `sequence-analytics-conversions-${label}`);
      await panel.screenshot({ path: path.join('/tmp', `dash-analytics-conversions-${label}.png`) });
    }
  });
});
