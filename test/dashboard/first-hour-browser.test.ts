import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { insertRows, select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { MIN_PASSWORD_LENGTH } from '../../src/services/dashboard/passwords';
import { createUser, SETUP_LINK_INVALID, setupUrl } from '../../src/services/dashboard/users';
import { createWebhook, sendTestEvent } from '../../src/services/webhooks/endpoints';
import { fanOut } from '../../src/services/webhooks/fan-out';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { silentLogger } from '../support/app';
import { browserSuite, DESKTOP, expectAccessible, expectNoSidewaysScroll, lookAtBothWidths, PHONE, serveDashboard, shoot, signInHere } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildAccount, buildContact, buildSequence } from '../support/factories';

// A newcomer's first hour with the dashboard, in a real browser: sign-in that returns to the
// page asked for, every page at phone width, the deliveries dialog, creating and enrolling
// contacts, list totals, a contact's own page, and the setup link's page. Each view is checked
// with axe and photographed at 1280x800 and at 390x844 (name-phone.png).

const TITLE = browserSuite('the dashboard for a newcomer, at desktop and phone width');
const WEBHOOKS = { allowInsecure: true, now: () => new Date() };

describe(TITLE, function () {
  this.timeout(120_000);
  const dashboard = serveDashboard(() =>
    createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      webhooks: WEBHOOKS,
    }),
  );
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  const look = (name: string) => lookAtBothWidths(page, name);

  const route = () => new URL(page.url()).pathname + new URL(page.url()).search;

  it('signs in back to the page asked for, Contacts by default, and never to another site', async () => {
    const user = await buildUser();
    await page.goto(`${dashboard.base}/dashboard/sequences?from=mail`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText('Contacts & Sequences').waitFor();
    await look('sign-in-return');
    await signInHere(page, user.email);
    await page.getByRole('heading', { name: 'Sequences', level: 1 }).waitFor();
    expect(route()).to.equal('/dashboard/sequences?from=mail');

    for (const next of ['//evil.example/contacts', 'https://evil.example/', '/\\evil.example', '/../../elsewhere', '/sign-in', '']) {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.goto(`${dashboard.base}/dashboard/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
      await signInHere(page, user.email);
      await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
      expect(route(), `next=${next}`).to.equal('/dashboard/contacts');
    }
  });

  it('says on the setup page whose password it sets and the rule for it, before anything is sent', async () => {
    const account = await buildAccount();
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'grace@example.com' });
    await page.goto(setupUrl(dashboard.base, setupToken));
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await page.getByText('This link sets the password for grace@example.com').waitFor();
    await page.getByText(`At least ${MIN_PASSWORD_LENGTH} characters`).waitFor();
    await page.getByText('Contacts & Sequences').waitFor();
    await look('setup-whose');

    await page.goto(`${dashboard.base}/dashboard/setup?token=${'0'.repeat(setupToken.length)}`);
    await page.getByRole('alert').getByText(SETUP_LINK_INVALID).waitFor();
    expect(await page.getByLabel('New password').count(), 'no form for a dead link').to.equal(0);
  });

  it('is usable at 390x844: a menu that opens and closes by mouse and keyboard, and no page wider than the screen', async () => {
    const account = await buildAccount({ name: 'Acme Ltd', maxActiveRuns: 100 });
    const user = await buildUser(account.id);
    const sequence = await buildSequence(account.id, 'active');
    const contact = await buildContact(account.id, {
      email: 'a-rather-long-address.for-a-narrow-screen@example.com',
      firstName: 'Ada',
      tags: ['vip', 'newsletter', 'trial'],
      customFields: { plan: 'pro', address: { city: 'London', street: 'A long street name that goes on and on' } },
    });
    await enrollByIds(testDb(), { accountId: account.id, sequenceId: sequence.id, contactIds: [contact.id] });
    await createWebhook(testDb(), { accountId: account.id, url: 'https://hooks.example.com/a/rather/long/path/for/a/phone' }, WEBHOOKS);

    await page.setViewportSize(PHONE);
    await page.goto(`${dashboard.base}/dashboard/contacts`);
    await signInHere(page, user.email);
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();

    // The menu: closed at first, its links out of sight; opened and closed by the button.
    const menu = page.getByRole('button', { name: 'Menu' });
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    expect(await nav.getByRole('link', { name: 'Sequences' }).isVisible()).to.equal(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    await nav.getByRole('link', { name: 'Sequences' }).waitFor();
    await shoot(page, 'menu-open-phone');
    await expectAccessible(page, 'open menu (phone)');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    await nav.getByRole('link', { name: 'Sequences' }).waitFor({ state: 'hidden' });

    // By keyboard: Enter opens, Tab reaches a link, Escape closes and gives focus back; a link
    // followed closes it too.
    await menu.focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).to.equal('true');
    for (let i = 0; i < 5 && !(await page.evaluate(() => document.activeElement?.closest('nav') !== null)); i += 1) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('nav')?.getAttribute('aria-label')), 'Tab reaches the menu').to.equal('Main');
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).to.equal('false');
    expect(await menu.evaluate((el) => el === document.activeElement), 'focus back on Menu').to.equal(true);
    await page.keyboard.press('Enter');
    await nav.getByRole('link', { name: 'Sequences' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sequences', level: 1 }).waitFor();
    expect(await menu.getAttribute('aria-expanded'), 'closed on the new page').to.equal('false');

    // Every page, no sideways scroll of the document.
    const pages: Array<[string, string, string]> = [
      ['/contacts', 'Contacts', 'contacts'],
      [`/contacts/${contact.id}`, 'Ada', 'contact'],
      ['/sequences', 'Sequences', 'sequences'],
      [`/sequences/${sequence.id}`, sequence.name, 'sequence'],
      ['/settings/developer/api-keys', 'API keys', 'api-keys'],
      ['/settings/developer/webhooks', 'Webhooks', 'webhooks'],
      ['/account', 'Account', 'account'],
    ];
    for (const [path, heading, name] of pages) {
      await page.goto(`${dashboard.base}/dashboard${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      // Every panel loaded (the sequence page has several, each with its own "Loading…").
      await page.waitForFunction(() => ![...document.querySelectorAll('[role="status"]')].some((status) => status.textContent?.startsWith('Loading')));
      await expectNoSidewaysScroll(page, name);
      await shoot(page, `${name}-phone`);
      await expectAccessible(page, `${name} (phone)`);
    }

    // At desktop width the menu button is gone and the links are always there.
    await page.setViewportSize(DESKTOP);
    expect(await menu.isVisible()).to.equal(false);
    expect(await nav.getByRole('link', { name: 'Sequences' }).isVisible()).to.equal(true);
  });

  it('shows every Created date of the Contacts table whole at 1280, and scrolls the table in its box at 390', async () => {
    const user = await buildUser();
    // What the README's walk-through leaves, and an address as long as people's get.
    await buildContact(user.accountId, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', tags: ['vip', 'newsletter', 'webinar'] });
    await buildContact(user.accountId, { email: 'grace@example.com', firstName: 'Grace', tags: ['trial'] });
    await buildContact(user.accountId, { email: 'firstname.lastname-marketing@subsidiary.example.co.uk', firstName: 'Maximilian', lastName: 'Oberhausen-Lindqvist', tags: ['customer', 'newsletter'] });
    await page.goto(`${dashboard.base}/dashboard/contacts`);
    await signInHere(page, user.email);
    const table = page.getByRole('group', { name: 'Contacts, newest first' });
    await table.getByRole('link', { name: 'ada@example.com' }).waitFor();

    // Each date's text against the part of the table's box that shows: nothing cut at its right.
    const dates = () =>
      table.evaluate((wrap) => {
        const box = wrap.getBoundingClientRect();
        return [...wrap.querySelectorAll('tbody time')].map((time) => {
          const cell = time.getBoundingClientRect();
          return { text: time.textContent, right: cell.right, lines: Math.round(cell.height / parseFloat(getComputedStyle(time).lineHeight)) };
        }).map((date) => ({ ...date, boxRight: box.right, scrolls: wrap.scrollWidth > wrap.clientWidth }));
      });
    await shoot(page, 'contacts-dates');
    const wide = await dates();
    expect(wide).to.have.length(3);
    for (const date of wide) {
      expect(date.right, `${date.text} ends inside the table's box at 1280`).to.be.at.most(date.boxRight);
      expect(date.lines, `${date.text} on one line`).to.equal(1);
      expect(date.scrolls, 'the whole table fits at 1280, no scrolling needed').to.equal(false);
    }
    await expectAccessible(page, 'contacts dates');

    await page.setViewportSize(PHONE);
    const narrow = await dates();
    for (const date of narrow) expect(date.lines, `${date.text} on one line at 390`).to.equal(1);
    expect(narrow[0]!.scrolls, 'the table scrolls inside its box at 390').to.equal(true);
    expect(await table.evaluate((wrap) => getComputedStyle(wrap).overflowX)).to.equal('auto');
    await expectNoSidewaysScroll(page, 'contacts dates (phone)');
    // Scrolled to its end, the box shows the dates whole.
    await table.evaluate((wrap) => wrap.scrollTo({ left: wrap.scrollWidth }));
    await shoot(page, 'contacts-dates-phone');
    for (const date of await dates()) expect(date.right, `${date.text} reachable at 390`).to.be.at.most(date.boxRight + 0.5);
  });

  it('deletes a draft made while trying things, after a confirmation, and keeps archived sequences out of the list until asked', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const used = await buildSequence(account.id, 'active');
    await enrollByIds(testDb(), { accountId: account.id, sequenceId: used.id, contactIds: [(await buildContact(account.id)).id] });
    const archived = await buildSequence(account.id, 'archived');
    const scratch = await buildSequence(account.id, 'draft');
    const stored = async () => (await select<{ id: string }>(testDb(), 'SELECT id FROM sequences WHERE account_id = ? ORDER BY id', [account.id])).map((r) => r.id);

    await page.goto(`${dashboard.base}/dashboard/sequences`);
    await signInHere(page, user.email);
    const list = page.getByRole('group', { name: 'Sequences, newest first' });
    await list.getByRole('link', { name: scratch.name }).waitFor();
    expect(await list.getByRole('link').allTextContents()).to.deep.equal([scratch.name, used.name]);
    await page.getByLabel('Show sequences').selectOption('archived');
    await list.getByRole('link', { name: archived.name }).waitFor();
    expect(await list.getByRole('link').allTextContents()).to.deep.equal([archived.name]);
    await page.getByLabel('Show sequences').selectOption('');
    await list.getByRole('link', { name: scratch.name }).waitFor();
    await look('sequences-without-archived');

    // A sequence with runs offers no Delete: it says to archive it.
    await list.getByRole('link', { name: used.name }).click();
    const danger = page.getByRole('region', { name: 'Delete' });
    await danger.getByText('archive it instead').waitFor();
    expect(await danger.getByRole('button').count()).to.equal(0);

    // The draft: Delete asks first; Cancel keeps it; Delete for good deletes it.
    await page.goto(`${dashboard.base}/dashboard/sequences/${scratch.id}`);
    await danger.getByRole('button', { name: 'Delete sequence' }).click();
    const confirm = page.getByRole('dialog', { name: `Delete ${scratch.name}?` });
    await look('sequence-delete-dialog');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await stored()).to.include(scratch.id);
    await danger.getByRole('button', { name: 'Delete sequence' }).click();
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Sequences', level: 1 }).waitFor();
    await list.getByRole('link', { name: used.name }).waitFor();
    expect(await list.getByRole('link').allTextContents()).to.deep.equal([used.name]);
    expect(await stored()).to.deep.equal([used.id, archived.id].sort());
  });

  it('fits the deliveries table in its dialog at 1280 and scrolls it inside the dialog at 390', async () => {
    const user = await buildUser();
    const { webhook } = await createWebhook(testDb(), { accountId: user.accountId, url: 'https://hooks.example.com/crm' }, WEBHOOKS);
    await sendTestEvent(testDb(), { accountId: user.accountId, id: webhook.id });
    await fanOut(testDb(), new Date());
    const [delivery] = await select<{ id: string; event_id: string }>(testDb(), 'SELECT id, event_id FROM webhook_deliveries WHERE endpoint_id = ?', [webhook.id]);
    const error = 'connect ECONNREFUSED 203.0.113.7:443 after the TLS handshake timed out while the receiver was restarting';
    const at = (minutes: number) => new Date(Date.UTC(2026, 10, 24, 12, minutes));
    await withTransaction(testDb(), (transaction) =>
      insertRows(
        testDb(),
        'webhook_attempts',
        ['delivery_id', 'endpoint_id', 'event_id', 'attempt', 'response_status', 'error', 'duration_ms', 'next_attempt_at', 'created_at'],
        [
          [delivery!.id, webhook.id, delivery!.event_id, 1, null, error, 10_000, at(5), at(0)],
          [delivery!.id, webhook.id, delivery!.event_id, 2, 503, 'Service Unavailable: the receiver answered with an error page', 812, at(30), at(5)],
          [delivery!.id, webhook.id, delivery!.event_id, 3, 204, null, 95, null, at(30)],
        ],
        transaction,
      ),
    );

    await page.goto(`${dashboard.base}/dashboard/settings/developer/webhooks`);
    await signInHere(page, user.email);
    await page.getByRole('button', { name: 'Deliveries of https://hooks.example.com/crm' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deliveries to https://hooks.example.com/crm' });
    await dialog.getByText('204 OK').waitFor();

    const sizes = () =>
      dialog.evaluate((el) => {
        const table = el.querySelector('table')!;
        const wrap = table.parentElement!;
        const style = getComputedStyle(el);
        return {
          table: table.getBoundingClientRect().width,
          inner: el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
          dialogScroll: el.scrollWidth - el.clientWidth,
          wrapWidth: wrap.clientWidth,
          wrapScroll: wrap.scrollWidth,
          wrapOverflow: getComputedStyle(wrap).overflowX,
        };
      });
    const wide = await sizes();
    expect(wide.table, 'the table within the dialog at 1280').to.be.at.most(wide.inner + 0.5);
    expect(wide.dialogScroll).to.equal(0);
    // Every column in view: the last (the error) ends inside the dialog.
    const lastCell = await dialog.getByText('ECONNREFUSED', { exact: false }).evaluate((el) => el.getBoundingClientRect().right);
    const dialogRight = await dialog.evaluate((el) => el.getBoundingClientRect().right);
    expect(lastCell).to.be.at.most(dialogRight);
    await expectAccessible(page, 'deliveries dialog');
    await shoot(page, 'deliveries-fit');

    await page.setViewportSize(PHONE);
    const narrow = await sizes();
    expect(narrow.dialogScroll, 'the dialog itself does not scroll sideways at 390').to.equal(0);
    expect(narrow.wrapWidth, 'the table box within the dialog at 390').to.be.at.most(narrow.inner + 0.5);
    expect(narrow.wrapOverflow, 'the table scrolls inside its box').to.equal('auto');
    expect(narrow.wrapScroll).to.be.at.least(narrow.table - 0.5);
    await expectNoSidewaysScroll(page, 'deliveries dialog (phone)');
    await expectAccessible(page, 'deliveries dialog (phone)');
    await shoot(page, 'deliveries-fit-phone');
  });

  it('creates a contact, names its page, shows its custom fields and blanks, enrolls it and a selection, and counts the list', async () => {
    const account = await buildAccount({ name: 'Acme Ltd', maxActiveRuns: 2 });
    const user = await buildUser(account.id);
    const sequence = await buildSequence(account.id, 'active');
    await buildSequence(account.id, 'draft');
    for (let i = 0; i < 27; i += 1) await buildContact(account.id, { email: `zed-${String(i).padStart(2, '0')}@example.com` });
    const bare = await buildContact(account.id, { email: 'bare@example.com' });
    const rich = await buildContact(account.id, {
      email: 'lin@example.com',
      firstName: 'Lin',
      lastName: 'Wei',
      customFields: { plan: 'pro', seats: 12, address: { city: 'Taipei' }, note: '' },
    });

    await page.goto(`${dashboard.base}/dashboard/contacts`);
    await signInHere(page, user.email);
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    // 29 contacts: the first page of 25, counted.
    await page.getByText('1–25 of 29').waitFor();
    // A blank cell is a dash that says "none".
    const bareRow = page.getByRole('row', { name: /bare@example\.com/ });
    await bareRow.getByRole('cell', { name: 'none', exact: true }).first().waitFor();
    expect(await bareRow.innerText()).to.include('—');
    await page.getByRole('navigation', { name: 'Contacts pages' }).getByRole('button', { name: 'Next' }).click();
    await page.getByText('26–29 of 29').waitFor();
    await page.getByRole('navigation', { name: 'Contacts pages' }).getByRole('button', { name: 'Previous' }).click();
    await page.getByText('1–25 of 29').waitFor();
    await page.getByLabel('Tag').fill('nobody');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No contacts match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByText('1–25 of 29').waitFor();

    // New contact: the service's complaints at their fields, nothing stored; then created.
    await page.getByRole('button', { name: 'New contact' }).click();
    const create = page.getByRole('dialog', { name: 'New contact' });
    await create.getByLabel('Email').fill('not an email');
    await create.getByLabel('Tags (optional)').fill(`ok, ${'x'.repeat(65)}`);
    await create.getByRole('button', { name: 'Create contact' }).click();
    await create.getByText('Please correct the fields marked below.').waitFor();
    const emailField = create.getByLabel('Email');
    expect(await emailField.getAttribute('aria-invalid')).to.equal('true');
    const tagsField = create.getByLabel('Tags (optional)');
    expect(await tagsField.getAttribute('aria-invalid')).to.equal('true');
    expect(await select(testDb(), 'SELECT id FROM contacts WHERE email = ?', ['grace@example.com'])).to.deep.equal([]);
    await look('new-contact-errors');
    await emailField.fill('grace@example.com');
    await create.getByLabel('First name (optional)').fill('Grace');
    await create.getByLabel('Last name (optional)').fill('Hopper');
    await tagsField.fill('navy, cobol');
    await create.getByRole('button', { name: 'Create contact' }).click();
    // Its page is named by the contact.
    await page.getByRole('heading', { name: 'Grace Hopper', level: 1 }).waitFor();
    expect(await page.title()).to.match(/^Grace Hopper · /);
    const [grace] = await select<{ id: string; first_name: string; tags: unknown }>(testDb(), 'SELECT id, first_name, tags FROM contacts WHERE email = ?', ['grace@example.com']);
    expect(grace!.first_name).to.equal('Grace');
    expect(typeof grace!.tags === 'string' ? JSON.parse(grace!.tags) : grace!.tags).to.deep.equal(['navy', 'cobol']);

    // Enroll from the contact's page: only the active sequence is offered.
    await page.getByRole('button', { name: 'Enroll in a sequence' }).click();
    let enroll = page.getByRole('dialog', { name: 'Enroll grace@example.com in a sequence' });
    await enroll.getByLabel('Sequence').waitFor();
    const options = await enroll.getByLabel('Sequence').locator('option').allTextContents();
    expect(options).to.deep.equal([sequence.name]);
    await look('enroll-dialog');
    await enroll.getByRole('button', { name: 'Enroll' }).click();
    let summary = page.getByRole('dialog', { name: `Enrolled in “${sequence.name}”` });
    await summary.getByRole('status', { name: 'Enrollment summary' }).waitFor();
    expect(await summary.getByRole('status').innerText()).to.match(/Enrolled: 1\s+Skipped \(already in it\): 0\s+Failed: 0/);
    await summary.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('region', { name: 'Runs' }).getByRole('link', { name: sequence.name }).waitFor();
    // A pending run is not shown in the green of an active sequence.
    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}`);
    const active = page.locator('dd .badge', { hasText: 'Active' });
    const pending = page.getByRole('region', { name: 'Runs' }).locator('.badge', { hasText: 'Pending' });
    await pending.waitFor();
    const colours = (badge: typeof active) => badge.evaluate((el) => `${getComputedStyle(el).color} on ${getComputedStyle(el).backgroundColor}`);
    expect(await colours(pending)).to.not.equal(await colours(active));
    await look('sequence-pending');

    // A contact without names is titled by its email; custom fields as a table.
    await page.goto(`${dashboard.base}/dashboard/contacts/${bare.id}`);
    await page.getByRole('heading', { name: 'bare@example.com', level: 1 }).waitFor();
    expect(await page.title()).to.match(/^bare@example\.com · /);
    await page.goto(`${dashboard.base}/dashboard/contacts/${rich.id}`);
    await page.getByRole('heading', { name: 'Lin Wei', level: 1 }).waitFor();
    const fields = page.getByRole('table', { name: 'Custom fields' });
    expect(await fields.getByRole('row', { name: /plan/ }).innerText()).to.match(/plan\s+pro/);
    expect(await fields.getByRole('row', { name: /seats/ }).innerText()).to.match(/seats\s+12/);
    expect(await fields.getByRole('row', { name: /address/ }).innerText()).to.match(/address\s+\{"city":"Taipei"\}/);
    await fields.getByRole('row', { name: /note/ }).getByRole('cell', { name: 'none' }).waitFor();
    expect(await page.getByLabel('Custom fields (JSON)').isVisible(), 'no raw JSON until asked for').to.equal(false);
    await look('contact-named');

    // Enroll a selection from the list: Grace is already in it (skipped), the limit of 2
    // active runs lets one more in, and the third fails with its reason.
    await page.goto(`${dashboard.base}/dashboard/contacts`);
    await page.getByText('1–25 of 30').waitFor();
    for (const email of ['grace@example.com', 'lin@example.com', 'bare@example.com']) await page.getByLabel(`Select ${email}`).check();
    await page.getByText('3 selected').waitFor();
    await look('contacts-selected');
    await page.getByRole('button', { name: 'Enroll selected in a sequence' }).click();
    enroll = page.getByRole('dialog', { name: 'Enroll 3 contacts in a sequence' });
    await enroll.getByRole('button', { name: 'Enroll' }).click();
    summary = page.getByRole('dialog', { name: `Enrolled in “${sequence.name}”` });
    await summary.getByRole('status', { name: 'Enrollment summary' }).waitFor();
    expect(await summary.getByRole('status').innerText()).to.match(/Enrolled: 1\s+Skipped \(already in it\): 1\s+Failed: 1/);
    const failure = await summary.getByRole('list', { name: 'Failures' }).innerText();
    expect(failure).to.match(/(lin|bare)@example\.com: over the account's active-run limit/);
    await look('enroll-summary');
    const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    expect(Number(n)).to.equal(2);
  });
});
