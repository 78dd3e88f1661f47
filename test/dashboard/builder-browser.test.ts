import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { silentLogger } from '../support/app';
import { browserSuite, closeUp as closeUpOf, DESKTOP, lookAtBothWidths, PHONE, serveDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildAccount, buildApiKey, buildTenant } from '../support/factories';
import { builderOf, cardOf, describedBy } from '../support/builder-page';

// The Sequences list and the builder in a real browser (issue 29): the empty list's example,
// pause, resume and archive from the list; a three-step sequence with an email step and a
// branch built step by step; a 400 shown at its field with nothing stored; a live sequence
// edited with its runs moved by a step map; exit rules, the sending window and the version
// history; tampered input refused with the API's message; another account's sequence a 404.
// What is stored is checked over the REST API, with the account's key. Each view is checked with
// axe and photographed at 1280x800 and at 390x844 (name-phone.png).

const TITLE = browserSuite('the sequences list and builder in a browser');
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

  const rest = (key: string, method: string, route: string, body?: unknown) => dashboard.rest(key, method, route, body);
  const look = (name: string) => lookAtBothWidths(page, name);
  const closeUp = (part: Locator, name: string) => closeUpOf(page, part, name);
  const signIn = (email: string, route = '/dashboard/sequences') => signInAt(page, `${dashboard.base}${route}`, email);

  const builder = () => builderOf(page);
  const card = (n: number) => cardOf(page, n);

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
    // Name, status, version, active runs, runs completed and messages sent in 7 days (none yet;
    // a dash until the figures arrive).
    await row.getByRole('cell', { name: '0', exact: true }).nth(2).waitFor();
    expect((await row.innerText()).replace(/\s+/g, ' ')).to.match(/Welcome Draft 1 0 0 0 /);
    expect(await list.getByRole('columnheader').allInnerTexts()).to.include.members(['Completed, 7 days', 'Messages sent, 7 days']);
    const statusOverApi = async () => (await rest(key, 'GET', `/sequences/${welcome.id}`)).body.sequence.status;
    await list.getByRole('button', { name: 'Activate Welcome' }).click();
    await list.getByRole('button', { name: 'Pause Welcome' }).waitFor();
    expect(await statusOverApi()).to.equal('active');
    await list.getByRole('button', { name: 'Pause Welcome' }).click();
    await list.getByRole('button', { name: 'Resume Welcome' }).waitFor();
    expect(await statusOverApi()).to.equal('paused');
    await look('sequences-list');
    // On a phone the row's actions are under its name, on screen without scrolling the table.
    await page.setViewportSize(PHONE);
    const resume = await list.getByRole('button', { name: 'Resume Welcome' }).boundingBox();
    expect(resume!.x + resume!.width).to.be.at.most(PHONE.width);
    await page.setViewportSize(DESKTOP);
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
    await card(1).getByLabel('If').selectOption({ label: 'Has a tag' });
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
    await builder().getByText(/^Nothing was saved: /).waitFor();
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
    // Its payload is checked in the page by the API's schema (16 KiB, measured in UTF-8 there too).
    await card(3).getByLabel('Payload (JSON, optional)').fill('{ "campaign": "welcome", "note": "çà va" }');
    await look('builder-steps');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const withWebhook = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(withWebhook.steps.map((s: { type: string }) => s.type)).to.deep.equal(['branch', 'email', 'webhook', 'exit']);
    expect(withWebhook.steps[2].endpointId).to.equal(webhook.id);
    expect(withWebhook.steps[2].payload).to.deep.equal({ campaign: 'welcome', note: 'çà va' });
  });

  it('edits a live sequence: says a new version will be made and where the runs are, and moves them by the step map', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const created = await rest(key, 'POST', '/sequences', {
      name: 'Trial',
      status: 'active',
      steps: [
        { id: 'wait-1', type: 'wait', duration: 'P1D' },
        { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
        { id: 'done', type: 'exit' },
      ],
    });
    expect(created.status).to.equal(201);
    const id = created.body.sequence.id;
    for (const email of ['ann@example.com', 'ben@example.com']) expect((await rest(key, 'POST', `/sequences/${id}/enroll-by-email`, { email })).status).to.equal(201);
    const runs = async () => ((await rest(key, 'GET', `/sequences/${id}/runs`)).body.runs as Array<{ version: number; currentStepId: string }>).map((r) => `v${r.version}:${r.currentStepId}`);
    expect(await runs()).to.deep.equal(['v1:wait-1', 'v1:wait-1']);

    await signIn(user.email, `/dashboard/sequences/${id}`);
    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    await card(1).getByLabel('Step id').fill('short-wait');
    await card(1).getByLabel('Amount').fill('2');
    await card(1).getByLabel('Unit').selectOption('hours');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save as version 2?' });
    await dialog.waitFor();
    const where = dialog.getByRole('group', { name: 'Active runs now, by version and step' });
    expect((await where.locator('tbody tr').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim())).to.deep.equal(['Version 1 (current) wait-1 2']);
    // No step of the new version has the old id: nothing is filled in, and moving waits for a choice.
    const mapping = dialog.getByLabel('Runs at wait-1 go to');
    expect(await mapping.inputValue()).to.equal('');
    expect(await dialog.getByRole('button', { name: 'Save and move runs' }).isDisabled()).to.equal(true);
    await mapping.selectOption('short-wait');
    await look('builder-live-save');
    await dialog.getByRole('button', { name: 'Save and move runs' }).click();
    await builder().getByText('Saved as version 2. 2 active runs moved to it.').waitFor();
    expect(await runs()).to.deep.equal(['v2:short-wait', 'v2:short-wait']);

    // Another change, this time keeping the runs where they are: filled in by id, then kept.
    await card(2).getByRole('button', { name: 'Edit step 2' }).click();
    await card(2).getByLabel('Subject').fill('Hello again');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    const second = page.getByRole('dialog', { name: 'Save as version 3?' });
    expect(await second.getByLabel('Runs at short-wait go to').inputValue()).to.equal('short-wait');
    await second.getByRole('button', { name: 'Save, keep runs on their version' }).click();
    await builder().getByText('Saved as version 3.').waitFor();
    expect(await runs()).to.deep.equal(['v2:short-wait', 'v2:short-wait']);
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.version).to.equal(3);

    // The version history: each version's steps, and what changed between two.
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByText('Version 3 (current)').waitFor();
    await versions.getByLabel('From version', { exact: true }).selectOption('1');
    const changes = versions.getByRole('region', { name: 'Changes from version 1 to version 3' });
    await changes.getByRole('heading', { name: 'Added' }).waitFor();
    const text = (await changes.innerText()).replace(/\s+/g, ' ');
    expect(text).to.contain('Added short-wait: Wait 2 hours');
    expect(text).to.contain('Removed wait-1: Wait 1 day');
    expect(text).to.contain('Changed hello (subject): Email "Hello" → Email "Hello again"');
    await versions.getByText('Version 1 · 3 steps').click();
    await versions.locator('details[open]').getByText('wait-1: Wait 1 day').waitFor();
    await look('builder-versions');

    // Exit rules: an empty tag is refused at its field, and nothing is stored; then saved.
    const rules = page.getByRole('region', { name: 'Exit rules' });
    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByRole('button', { name: 'Save exit rules' }).click();
    expect(await describedBy(rules.getByLabel('Rule 1: tag'))).to.match(/./);
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.exitWhen).to.deep.equal([]);
    await rules.getByLabel('Rule 1: tag').fill('purchased');
    await rules.getByRole('button', { name: 'Save exit rules' }).click();
    await rules.getByText('Exit rules saved.').waitFor();
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.exitWhen).to.deep.equal([{ tag: 'purchased' }]);

    // The sending window: a zone the API does not know is its 400, at the field; then saved.
    const window = page.getByRole('region', { name: 'Sending window' });
    await window.getByLabel('Only act inside a sending window').check();
    await window.getByLabel('Time zone', { exact: true }).fill('Mars/Olympus');
    await window.getByRole('button', { name: 'Save sending window' }).click();
    await window.getByText('Please correct the fields marked below.').waitFor();
    expect(await describedBy(window.getByLabel('Time zone', { exact: true }))).to.match(/Mars\/Olympus/);
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.sendingWindow).to.equal(null);
    await window.getByLabel('Time zone', { exact: true }).fill('Europe/Paris');
    await window.getByRole('button', { name: 'Save sending window' }).click();
    await window.getByText('Sending window saved.').waitFor();
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.sendingWindow).to.deep.equal({
      timeZone: 'Europe/Paris',
      from: '09:00',
      to: '17:00',
      weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'],
    });
    await look('builder-rules');
  });

  it('refuses tampered steps with the API\'s message, and another account\'s sequence is a 404', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const steps = [
      { id: 'pause', type: 'wait', duration: 'P1D' },
      { id: 'done', type: 'exit' },
    ];
    const id = (await rest(key, 'POST', '/sequences', { name: 'Tampered', steps })).body.sequence.id;
    await signIn(user.email, `/dashboard/sequences/${id}`);
    await card(2).waitFor();

    // A step type the builder does not offer, put in its select by hand.
    await builder().getByLabel('New step').evaluate((select: HTMLSelectElement) => select.add(new Option('SMS', 'sms')));
    await builder().getByLabel('New step').selectOption('sms');
    await builder().getByRole('button', { name: 'Add step' }).click();
    await builder().getByRole('button', { name: 'Save steps' }).click();
    const unknown = await rest(key, 'PATCH', `/sequences/${id}`, { steps: [...steps, { id: 'sms', type: 'sms' }] });
    expect(unknown.status).to.equal(400);
    const unknownMessage = unknown.body.details.find((d: { path: string }) => d.path.startsWith('steps.2')).message;
    await card(3).locator('.step-errors').getByText(unknownMessage, { exact: true }).waitFor();
    await card(3).getByRole('button', { name: 'Remove step 3' }).click();

    // A branch whose "then" names a step that is not there.
    await builder().getByLabel('New step').selectOption({ label: 'Branch' });
    await builder().getByRole('button', { name: 'Add step' }).click();
    await card(3).getByLabel('If').selectOption({ label: 'Has a tag' });
    await card(3).getByLabel('Tag').fill('vip');
    await card(3).getByLabel('Else go to').selectOption({ label: '1. pause (Wait)' });
    const then = card(3).getByLabel('Then go to');
    await then.evaluate((select: HTMLSelectElement) => {
      select.options[0]!.value = 'ghost';
    });
    await then.selectOption('ghost');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText(/^Nothing was saved: /).waitFor();
    const ghost = await rest(key, 'PATCH', `/sequences/${id}`, { steps: [...steps, { id: 'branch', type: 'branch', if: { tag: 'vip' }, then: 'ghost', else: 'pause' }] });
    expect(ghost.status).to.equal(400);
    expect(ghost.body.details).to.deep.equal([{ path: 'steps.2.then', message: 'Step "branch": "ghost" is not a step of this sequence' }]);
    expect(await describedBy(then)).to.contain('Step "branch": "ghost" is not a step of this sequence');
    const stored = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(stored.version).to.equal(1);
    expect(stored.steps).to.deep.equal(steps);
    await look('builder-tampered');

    // Another account's sequence: its page is "not found", and so is a save sent by hand.
    const other = await buildTenant();
    const theirs = await createSequence(testDb(), { accountId: other.accountId, name: 'Theirs', steps: [{ id: 'x', type: 'exit' }] });
    await page.goto(`${dashboard.base}/dashboard/sequences/${theirs.id}`);
    await page.getByText('Sequence not found').waitFor();
    const status = await page.evaluate(async (sequenceId) => {
      const res = await fetch('/trpc/dashboard.sequences.update', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: sequenceId, steps: [] }) });
      return res.status;
    }, theirs.id);
    expect(status).to.equal(404);
    const [row] = await select<{ version: number }>(testDb(), 'SELECT version FROM sequences WHERE id = ?', [theirs.id]);
    expect(Number(row!.version)).to.equal(1);
  });

  it('builds the abandoned-cart sequence: entry by cart_abandoned, a wait for checkout_completed of the same cart, a reminder on timeout', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const id = (await rest(key, 'POST', '/sequences', { name: 'Abandoned cart' })).body.sequence.id;
    await signIn(user.email, `/dashboard/sequences/${id}`);
    await builder().getByText('No steps yet').waitFor();
    for (const type of ['Wait for an activity', 'Email', 'Exit']) {
      await builder().getByLabel('New step').selectOption({ label: type });
      await builder().getByRole('button', { name: 'Add step' }).click();
    }
    await card(2).getByLabel('Step id').fill('remind');
    await card(2).getByLabel('Subject').fill('You left something in your cart');
    await card(3).getByLabel('Step id').fill('done');
    const wait = card(1);
    await wait.getByLabel('Step id').fill('wait-checkout');
    await wait.getByLabel('Activity', { exact: true }).fill('checkout_completed');
    await wait.getByRole('button', { name: 'Add a match' }).click();
    await wait.getByLabel('Match 1: property').fill('cartId');
    await wait.getByLabel('Match 1: value', { exact: true }).fill('{{ trigger.properties.cartId }}');
    expect(await describedBy(wait.getByLabel('Match 1: value', { exact: true }))).to.contain("Reads: the trigger's cartId.");
    // Not a length yet (the timeout is a number and a unit): refused in the page, at the field,
    // and nothing can be saved.
    const timeout = wait.getByRole('group', { name: 'Timeout' });
    await timeout.getByLabel('Amount').fill('0');
    await wait.getByLabel('When it comes, go to').selectOption({ label: '3. done (Exit)' });
    await wait.getByLabel('On timeout, go to').selectOption({ label: '2. remind (Email)' });
    await timeout.getByText('A whole number, 1 or more').waitFor();
    expect(await builder().getByRole('button', { name: 'Save steps' }).isDisabled()).to.equal(true);
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.version).to.equal(null);
    await look('builder-cart-form');
    await closeUp(wait, 'builder-cart-form-wait');
    await timeout.getByLabel('Amount').fill('3');
    await timeout.getByLabel('Unit').selectOption('hours');
    // The flow: the wait's two paths, and the reminder reached only by its timeout.
    const paths = wait.getByRole('group', { name: 'The two paths of step 1' });
    expect((await paths.innerText()).replace(/\s+/g, ' ')).to.equal('When checkout_completed comes go to 3. done Timed out after 3 hours go to 2. remind');
    expect(await card(2).locator('.flow-note').innerText()).to.equal('Reached only by a jump from another step.');
    expect(await wait.locator('.step-what').innerText()).to.equal("Wait up to 3 hours for activity checkout_completed with cartId = the trigger's cartId; then done, on timeout remind");
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 1.').waitFor();
    await look('builder-cart');

    // Entry by activity: a re-entry time the API refuses (over 366 days) is its 400, at the field.
    const entry = page.getByRole('region', { name: 'Entry by activity' });
    await entry.getByLabel('Enroll the contact of an activity').check();
    await entry.getByLabel('Entry activity').fill('cart_abandoned');
    await entry.getByRole('button', { name: 'Add a condition' }).click();
    await entry.getByLabel('Condition 1: property').fill('total');
    await entry.getByLabel('Condition 1: operator').selectOption({ label: 'is more than' });
    await entry.getByLabel('Condition 1: value').fill('0');
    await entry.getByLabel('Once a time has passed since its previous run started').check();
    await entry.getByLabel('Again after').fill('P400D');
    await entry.getByRole('button', { name: 'Save entry' }).click();
    await entry.getByText('Please correct the fields marked below.').waitFor();
    expect(await describedBy(entry.getByLabel('Again after'))).to.contain('entry.reentry.after: P400D is more than 366 days');
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.entry).to.equal(null);
    await entry.getByLabel('Again after').fill('P30D');
    await entry.getByRole('button', { name: 'Save entry' }).click();
    await entry.getByText('Entry saved.').waitFor();

    // A goal, saved, then removed (sent as null).
    const goal = page.getByRole('region', { name: 'Goal' });
    await goal.getByLabel('Convert a run on an activity').check();
    await goal.getByLabel('Goal activity').fill('order_placed');
    await goal.getByLabel('Within (optional)').fill('P7D');
    await goal.getByRole('button', { name: 'Save goal' }).click();
    await goal.getByText('Goal saved.').waitFor();
    expect((await rest(key, 'GET', `/sequences/${id}`)).body.sequence.goal).to.deep.equal({ activity: 'order_placed', within: 'P7D' });
    await look('builder-cart-settings');
    await closeUp(page.locator('.panels').filter({ has: entry }), 'builder-cart-settings-forms');
    await goal.getByLabel('Convert a run on an activity').uncheck();
    await goal.getByRole('button', { name: 'Save goal' }).click();
    await goal.getByText('Goal saved.').waitFor();

    const stored = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(stored.entry).to.deep.equal({ activity: 'cart_abandoned', where: [{ property: 'total', gt: 0 }], reentry: { after: 'P30D' } });
    expect(stored.goal).to.equal(null);
    expect(stored.steps).to.deep.equal([
      { id: 'wait-checkout', type: 'wait_for', activity: 'checkout_completed', match: { cartId: '{{ trigger.properties.cartId }}' }, timeout: 'PT3H', next: 'done', onTimeout: 'remind' },
      { id: 'remind', type: 'email', subject: 'You left something in your cart', html: stored.steps[1].html },
      { id: 'done', type: 'exit' },
    ]);
  });

  it('edits a split\'s variants and a message\'s category, and reads them back as stored', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const created = await rest(key, 'POST', '/sequences', {
      name: 'Subject test',
      steps: [
        {
          id: 'ab',
          type: 'split',
          variants: [
            { id: 'a', weight: 50, next: 'hello' },
            { id: 'b', weight: 50, next: 'done' },
          ],
        },
        { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
        { id: 'done', type: 'exit' },
      ],
    });
    expect(created.status).to.equal(201);
    const id = created.body.sequence.id;
    await signIn(user.email, `/dashboard/sequences/${id}`);
    const fork = card(1).getByRole('group', { name: 'The 2 paths of step 1' });
    expect((await fork.innerText()).replace(/\s+/g, ' ')).to.equal('Variant a, 50% go to 2. hello Variant b, 50% go to 3. done');
    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    expect(await card(1).getByRole('button', { name: 'Remove variant 1' }).isDisabled()).to.equal(true);
    await card(1).getByRole('button', { name: 'Add a variant' }).click();
    await card(1).getByLabel('Variant 3: weight').fill('100');
    await card(1).getByLabel('Variant 3: go to').selectOption({ label: '3. done (Exit)' });
    expect(await describedBy(card(1).getByLabel('Variant 3: weight'))).to.contain('50% of the runs.');
    expect(await describedBy(card(1).getByLabel('Variant 1: weight'))).to.contain('25% of the runs.');
    // A name used twice: refused in the page, with the API's message, at the variant's name.
    await card(1).getByLabel('Variant 3: name').fill('a');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText(/^Nothing was saved: /).waitFor();
    expect(await describedBy(card(1).getByLabel('Variant 3: name'))).to.contain('Step "ab": variant "a" is named twice');
    await card(1).getByLabel('Variant 3: name').fill('c');
    await card(1).getByRole('button', { name: 'Remove variant 2' }).click();
    expect(await card(1).getByLabel('Variant 2: name').inputValue()).to.equal('c');
    await card(2).getByRole('button', { name: 'Edit step 2' }).click();
    await card(2).getByLabel('Category').selectOption({ label: 'Transactional' });
    // A branch on a property of the run's trigger.
    await builder().getByLabel('New step').selectOption({ label: 'Branch' });
    await builder().getByRole('button', { name: 'Add step' }).click();
    await card(4).getByLabel('If').selectOption({ label: 'A property of the trigger (the activity that started the run)' });
    await card(4).getByLabel('Trigger: property').fill('total');
    await card(4).getByLabel('Trigger: operator').selectOption({ label: 'is at least' });
    await card(4).getByLabel('Trigger: value').fill('50');
    await card(4).getByLabel('Then go to').selectOption({ label: '2. hello (Email)' });
    await card(4).getByLabel('Else go to').selectOption({ label: '3. done (Exit)' });
    expect(await card(4).locator('.step-what').innerText()).to.equal("If the trigger's property total is at least 50 go to hello, else done");
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const stored = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence.steps;
    expect(stored[0].variants).to.deep.equal([
      { id: 'a', weight: 50, next: 'hello' },
      { id: 'c', weight: 100, next: 'done' },
    ]);
    expect(stored[1]).to.deep.equal({ id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>', category: 'transactional' });
    expect(stored[3]).to.deep.equal({ id: 'branch', type: 'branch', if: { property: 'total', gte: 50 }, then: 'hello', else: 'done' });

    // Read back after a reload: the forms show what is stored, and the version diff says it.
    await page.reload();
    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    expect(await card(1).getByLabel('Variant 2: weight').inputValue()).to.equal('100');
    expect(await describedBy(card(1).getByLabel('Variant 2: weight'))).to.contain('66.7% of the runs.');
    await card(2).getByRole('button', { name: 'Edit step 2' }).click();
    expect(await card(2).getByLabel('Category').inputValue()).to.equal('transactional');
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByLabel('From version', { exact: true }).selectOption('1');
    const changes = versions.getByRole('region', { name: 'Changes from version 1 to version 2' });
    await changes.getByRole('heading', { name: 'Changed' }).waitFor();
    const text = (await changes.innerText()).replace(/\s+/g, ' ');
    expect(text).to.contain('variant a: 50% → 33.3%');
    expect(text).to.contain('variant c added: 66.7% to done');
    expect(text).to.contain('variant b removed');
    expect(text).to.contain('category marketing → transactional');
    await look('builder-split');
    await closeUp(card(1), 'builder-split-card');
    await closeUp(changes, 'builder-split-diff');
  });

  it('has a form for every step type, checked in the page by the API\'s schemas before anything is sent', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id);
    const id = (await rest(key, 'POST', '/sequences', { name: 'Every type' })).body.sequence.id;
    await signIn(user.email, `/dashboard/sequences/${id}`);
    await builder().getByText('No steps yet').waitFor();
    for (const type of ['Wait', 'Tag', 'Update fields', 'WhatsApp message', 'Exit']) {
      await builder().getByLabel('New step').selectOption({ label: type });
      await builder().getByRole('button', { name: 'Add step' }).click();
    }
    // Wait until 08:30 on weekdays.
    await card(1).getByLabel('Until a time of day').check();
    await card(1).getByLabel('Time of day', { exact: true }).fill('08:30');
    for (const day of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']) await card(1).getByLabel(day, { exact: true }).check();
    await card(2).getByLabel('Tags to add').fill('onboarded, trial ');
    await card(2).getByLabel('Tags to remove').fill('lead');
    await card(3).getByLabel('Custom fields (JSON)').fill('{ "plan": "pro", "address": { "city": "Leeds"');
    await card(3).getByText('Not valid JSON yet').waitFor();
    expect(await builder().getByRole('button', { name: 'Save steps' }).isDisabled()).to.equal(true);
    await card(3).getByLabel('Custom fields (JSON)').fill('{ "plan": "pro", "address": { "city": "Leeds" } }');
    // A step removed with its JSON unfinished no longer holds the save back.
    await builder().getByLabel('New step').selectOption({ label: 'Update fields' });
    await builder().getByRole('button', { name: 'Add step' }).click();
    await card(6).getByLabel('Custom fields (JSON)').fill('{ "half": ');
    expect(await builder().getByRole('button', { name: 'Save steps' }).isDisabled()).to.equal(true);
    await card(6).getByRole('button', { name: 'Remove step 6' }).click();
    expect(await builder().getByRole('button', { name: 'Save steps' }).isDisabled()).to.equal(false);
    // A template name WhatsApp would not take: refused in the page with the API's own message.
    await card(4).getByLabel('Template name').fill('Order Update');
    await card(4).getByRole('button', { name: 'Add a body parameter' }).click();
    await card(4).getByLabel('Body parameter 1').fill('{{ contact.firstName | default: "there" }}');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText(/^Nothing was saved: /).waitFor();
    const api = await rest(key, 'PATCH', `/sequences/${id}`, { steps: [{ type: 'whatsapp', template: { name: 'Order Update', language: { code: 'en_US' } } }] });
    expect(api.status).to.equal(400);
    expect(api.body.details[0].path).to.equal('steps.0.template.name');
    expect(await describedBy(card(4).getByLabel('Template name'))).to.contain(api.body.details[0].message);
    await look('builder-forms');

    await card(4).getByLabel('Template name').fill('order_update');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 1.').waitFor();
    const stored = (await rest(key, 'GET', `/sequences/${id}`)).body.sequence.steps;
    expect(stored).to.deep.equal([
      { id: 'wait', type: 'wait', until: { time: '08:30', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'] } },
      { id: 'tag', type: 'tag', add: ['onboarded', 'trial'], remove: ['lead'] },
      { id: 'update', type: 'update', customFields: { plan: 'pro', address: { city: 'Leeds' } } },
      {
        id: 'whatsapp',
        type: 'whatsapp',
        template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{ contact.firstName | default: "there" }}' }] }] },
      },
      { id: 'exit', type: 'exit' },
    ]);
  });
});
