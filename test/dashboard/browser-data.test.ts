import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible as expectPageAccessible, serveDashboard, shoot as shootPage, signInAt } from '../support/browser';
import { testDb } from '../support/db';
import { buildAccount, buildApiKey } from '../support/factories';
import { buildUser } from '../support/dashboard';

// The Contacts and Sequences pages in a real browser, as a person uses them: find a contact,
// change it, enroll it (by API key, as an integration does), unenroll it from its page, delete
// another; then what is stored is checked. Axe on every page; screenshots as browser.test.ts.

const TITLE = browserSuite('the dashboard\'s contacts and sequences in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  const dashboard = serveDashboard(() =>
    createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger }),
  );
  let page: Page;

  const shoot = (name: string) => shootPage(page, name);

  const expectAccessible = (what: string) => expectPageAccessible(page, what);

  const rest = (key: string, method: string, route: string, body: unknown) => dashboard.rest(key, method, route, body);

  async function contactRow(email: string) {
    const [row] = await select<{ id: string; tags: unknown; email_subscription_status: string }>(
      testDb(),
      'SELECT id, tags, email_subscription_status FROM contacts WHERE email = ?',
      [email],
    );
    return row;
  }

  it('finds a contact by prefix, tags it, unsubscribes it, unenrolls it from a new sequence and deletes another', async () => {
    const account = await buildAccount({ name: 'Acme Ltd', maxActiveRuns: 10 });
    const user = await buildUser(account.id);
    const { key } = await buildApiKey(account.id, { name: 'Shop plugin' });
    // More contacts than one page holds (25), created first: older, so they fill the second page.
    const filler = Array.from({ length: 30 }, (_, i) => ({ email: `zed-${String(i).padStart(2, '0')}@example.com` }));
    expect((await rest(key, 'POST', '/contacts/batch', { contacts: filler })).status).to.equal(201);
    for (const contact of [
      { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', tags: ['vip'] },
      { email: 'adam@example.com', firstName: 'Adam', tags: ['trial'] },
      { email: 'bob@example.com', firstName: 'Bob', whatsappSubscriptionStatus: 'unsubscribed' },
    ]) {
      expect((await rest(key, 'POST', '/contacts/upsert', contact)).status).to.equal(201);
    }

    page = await dashboard.newPage();
    await signInAt(page, `${dashboard.base}/dashboard`, user.email);
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();

    // The list: newest first, 25 a page, Next and Previous.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'bob@example.com' }).waitFor();
    expect(await page.locator('tbody tr').count()).to.equal(25);
    await expectAccessible('contacts page');
    await shoot('contacts');
    const pager = page.getByRole('navigation', { name: 'Contacts pages' });
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText('Page 2').waitFor();
    await page.getByRole('link', { name: 'bob@example.com' }).waitFor({ state: 'detached' });
    const second = await page.locator('tbody th').allInnerTexts();
    expect(second).to.have.length(8);
    expect(second.every((email) => email.startsWith('zed-')), second.join()).to.equal(true);
    expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).to.equal(true);
    await pager.getByRole('button', { name: 'Previous' }).click();
    await page.getByRole('link', { name: 'bob@example.com' }).waitFor();

    // Filters: a prefix of the email, then a tag, then a subscription status.
    await page.getByLabel('Email starts with').fill('ADA');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'bob@example.com' }).waitFor({ state: 'detached' });
    expect(await page.locator('tbody th').allInnerTexts()).to.deep.equal(['adam@example.com', 'ada@example.com']);
    await page.getByLabel('Tag').fill('vip');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'adam@example.com' }).waitFor({ state: 'detached' });
    expect(await page.locator('tbody th').allInnerTexts()).to.deep.equal(['ada@example.com']);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('WhatsApp subscription').selectOption('unsubscribed');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'ada@example.com' }).waitFor({ state: 'detached' });
    expect(await page.locator('tbody th').allInnerTexts()).to.deep.equal(['bob@example.com']);
    await page.getByLabel('Tag').fill('nobody-has-this');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No contacts match these filters.').waitFor();

    // The contact page.
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Email starts with').fill('ada@');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'adam@example.com' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'ada@example.com' }).click();
    await page.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
    // Back returns to the same search.
    await page.goBack();
    await page.getByRole('link', { name: 'ada@example.com' }).waitFor();
    expect(await page.getByLabel('Email starts with').inputValue()).to.equal('ada@');
    expect(await page.locator('tbody th').allInnerTexts()).to.deep.equal(['ada@example.com']);
    await page.getByRole('link', { name: 'ada@example.com' }).click();
    await page.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
    expect(await page.getByLabel('First name').inputValue()).to.equal('Ada');
    await page.getByText('This contact has never been enrolled').waitFor();

    // The API's validation, shown at the field with the API's message; nothing stored.
    await page.getByLabel('Email', { exact: true }).fill('not-an-email');
    await page.getByRole('button', { name: 'Save fields' }).click();
    await page.getByText('Invalid email address').waitFor();
    await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
    await page.getByText('Edit custom fields as JSON').click();
    await page.getByLabel('Custom fields (JSON)').fill('{"plan": ');
    await page.getByRole('button', { name: 'Save fields' }).click();
    await page.getByText('Must be a JSON object').waitFor();
    await page.getByLabel('Custom fields (JSON)').fill('{"plan": "pro"}');
    await page.getByLabel('Last name').fill('King');
    await page.getByRole('button', { name: 'Save fields' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();

    await page.getByLabel('New tag').fill('newsletter');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.getByRole('button', { name: 'Remove tag newsletter' }).waitFor();
    await page.getByRole('button', { name: 'Remove tag vip' }).click();
    await page.getByRole('button', { name: 'Remove tag vip' }).waitFor({ state: 'detached' });

    const subscriptions = page.getByRole('region', { name: 'Subscriptions' });
    await subscriptions.getByLabel('Email subscription').selectOption('unsubscribed');
    const saved = page.waitForResponse((res) => res.url().includes('dashboard.contacts.updateSubscriptions'));
    await subscriptions.getByRole('button', { name: 'Save subscriptions' }).click();
    expect((await saved).status()).to.equal(200);
    await subscriptions.getByRole('button', { name: 'Save subscriptions' }).and(page.locator(':disabled')).waitFor();

    let ada = await contactRow('ada@example.com');
    expect(ada.email_subscription_status).to.equal('unsubscribed');
    const [stored] = await select<{ last_name: string; tags: unknown; custom_fields: unknown }>(
      testDb(),
      'SELECT last_name, tags, custom_fields FROM contacts WHERE id = ?',
      [ada.id],
    );
    expect(stored.last_name).to.equal('King');
    expect(typeof stored.custom_fields === 'string' ? JSON.parse(stored.custom_fields) : stored.custom_fields).to.deep.equal({ plan: 'pro' });
    expect(typeof stored.tags === 'string' ? JSON.parse(stored.tags) : stored.tags).to.deep.equal(['newsletter']);
    await expectAccessible('contact page');

    // A sequence: created as a draft, then made active.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sequences' }).click();
    await page.getByText('No sequences yet').waitFor();
    await page.getByRole('button', { name: 'Create sequence' }).click();
    const create = page.getByRole('dialog', { name: 'Create a sequence' });
    await create.getByRole('button', { name: 'Create sequence' }).click();
    await create.getByText('must not be empty').waitFor();
    await create.getByLabel('Name').fill('Welcome series');
    await expectAccessible('create-sequence dialog');
    await create.getByRole('button', { name: 'Create sequence' }).click();
    await page.getByRole('heading', { name: 'Welcome series', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Change status' }).waitFor();
    const [sequence] = await select<{ id: string; status: string }>(testDb(), 'SELECT id, status FROM sequences WHERE name = ?', ['Welcome series']);
    expect(sequence.status).to.equal('draft');
    await page.getByLabel('New status').selectOption('active');
    await page.getByRole('button', { name: 'Change status' }).click();
    await page.locator('dd').getByText('Active', { exact: true }).waitFor();

    // Enrolled by the integration, with its key.
    const enrolled = await rest(key, 'POST', `/sequences/${sequence.id}/enroll-by-email`, { email: 'ada@example.com' });
    expect(enrolled.status).to.equal(201);
    await page.reload();
    await page.getByLabel('Run status').selectOption('pending');
    const runLink = page.getByRole('region', { name: 'Runs' }).getByRole('link', { name: 'ada@example.com', exact: true });
    await runLink.waitFor();
    await page.getByLabel('Run status').selectOption('cancelled');
    await page.getByText('No runs in this status.').waitFor();
    await page.getByLabel('Run status').selectOption('');
    await expectAccessible('sequence page');
    await shoot('sequence');

    await page.getByRole('link', { name: 'Sequences', exact: true }).first().click();
    const row = page.getByRole('row', { name: /Welcome series/ });
    // Active, no version (no steps yet), one active run.
    expect(await row.innerText()).to.match(/Active\s+—\s+none\s+1\s/);
    await expectAccessible('sequences page');
    await shoot('sequences');

    // The run counts against the account's limit.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    const facts = page.locator('dl');
    await facts.getByText('1 (10 % of the limit)').waitFor();
    expect(await facts.innerText()).to.include('Acme Ltd');

    // Unenrolled from the contact page, reached from the sequence's run.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sequences' }).click();
    await row.getByRole('link', { name: 'Welcome series' }).click();
    await page.getByRole('region', { name: 'Runs' }).getByRole('link', { name: 'ada@example.com', exact: true }).click();
    await page.getByRole('heading', { name: 'Ada King', level: 1 }).waitFor();
    const runs = page.getByRole('region', { name: 'Runs' });
    await runs.getByText('Pending').waitFor();
    await expectAccessible('contact page with a run');
    await shoot('contact');
    await runs.getByRole('button', { name: 'Unenroll from Welcome series' }).click();
    const confirm = page.getByRole('dialog', { name: 'Unenroll from “Welcome series”?' });
    await expectAccessible('unenroll confirmation');
    await shoot('unenroll-dialog');
    await confirm.getByRole('button', { name: 'Cancel the run' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await runs.getByText('Cancelled').waitFor();
    const [run] = await select<{ status: string }>(testDb(), 'SELECT status FROM sequence_runs WHERE contact_id = ?', [ada.id]);
    expect(run.status).to.equal('cancelled');

    // Deleted, after a confirmation that can be declined.
    await page.getByRole('button', { name: 'Delete contact' }).click();
    let dialog = page.getByRole('dialog', { name: 'Delete ada@example.com?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await contactRow('ada@example.com')).to.not.equal(undefined);
    await page.getByRole('button', { name: 'Delete contact' }).click();
    dialog = page.getByRole('dialog', { name: 'Delete ada@example.com?' });
    await expectAccessible('delete confirmation');
    await dialog.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'adam@example.com' }).waitFor();
    expect(await page.getByRole('link', { name: 'ada@example.com' }).count()).to.equal(0);
    ada = await contactRow('ada@example.com');
    expect(ada).to.equal(undefined);
    const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_runs', []);
    expect(Number(n)).to.equal(0);
    // Its address now answers with the API's message, and a way back.
    await page.goBack();
    await page.getByRole('alert').getByText('Contact not found').waitFor();
    await page.getByRole('link', { name: 'Back to contacts' }).waitFor();
  });
});
