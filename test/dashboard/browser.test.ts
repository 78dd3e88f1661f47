import type { Server } from 'node:http';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { SIGN_IN_FAILED } from '../../src/routers/dashboard/auth';
import { SIGN_IN_LIMITED } from '../../src/http/sign-in-limit';
import { createUser, setupUrl } from '../../src/services/dashboard/users';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible as expectPageAccessible, launchBrowser, SHOTS, shoot as shootPage, signInAt } from '../support/browser';
import { testDb } from '../support/db';
import { buildAccount } from '../support/factories';
import { buildUser, PASSWORD } from '../support/dashboard';
import { closeServer, listenOnLoopback } from '../support/listen';

// The dashboard in a real browser (Debian's chromium, headless), as a person uses it: by
// labels, roles and visible text. Every page is checked with axe and photographed into
// SCREENSHOT_DIR (CI keeps it beside its logs), or a temporary directory printed below.

const TITLE = browserSuite('the dashboard in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  let browser: Browser;
  let server: Server;
  let base: string;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchBrowser(this);
    process.stdout.write(`      dashboard screenshots: ${SHOTS}\n`);
  });
  after(async () => {
    await browser?.close();
  });

  // A server of its own per test, not serveDashboard's one per suite: fresh sign-in failure
  // counters, and a context with clipboard permissions for its origin.
  beforeEach(async () => {
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger });
    ({ server, base } = await listenOnLoopback(app));
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context?.close();
    await closeServer(server);
  });

  const shoot = (name: string) => shootPage(page, name);

  const expectAccessible = (what: string) => expectPageAccessible(page, what);

  // Signs in from the page asked for (sign-in returns to it), by default the dashboard's front.
  async function signIn(email: string, password = PASSWORD, path = '/dashboard') {
    await signInAt(page, `${base}${path}`, email, password);
  }

  // Presses Tab until the element has focus (a date input takes one Tab per part).
  async function tabTo(target: ReturnType<Page['locator']>, what: string) {
    for (let i = 0; i < 20; i += 1) {
      if (await target.evaluate((el) => el === document.activeElement)) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`Tab never reached ${what}`);
  }

  async function restUpsert(key: string) {
    const res = await fetch(`${base}/api/v1/contacts/upsert`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', firstName: 'Ada' }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('sets a password from the setup link (signed in by it), signs out and in again, creates a key, uses it, disables it', async () => {
    const account = await buildAccount({ name: 'Acme Ltd', maxActiveRuns: 500 });
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'ada@example.com' });

    await page.goto(setupUrl(base, setupToken));
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await expectAccessible('setup page');
    await shoot('setup');
    await page.getByLabel('New password').fill('short');
    await page.getByLabel('Repeat the password').fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('must be at least 12 characters').waitFor();
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    // Setting the password signs in: Contacts at once; signed out, the sign-in page.
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();

    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible('sign-in page');
    await shoot('sign-in');
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    // Contacts first, the home of a signed-in person.
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByText('No keys yet').waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.getByLabel('Name').fill('Shop plugin');
    await expectAccessible('create-key dialog');
    await shoot('create-key-dialog');
    await create.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Key “Shop plugin” created' });
    await shown.waitFor();
    expect(await shown.innerText()).to.include('It will not be shown again');
    const value = await shown.getByLabel('API key').inputValue();
    expect(value).to.match(/^svc_[0-9a-f]{40}$/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).to.equal(value);
    await expectAccessible('key value dialog');
    await shoot('key-created-dialog');
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'hidden' });

    const used = await restUpsert(copied);
    expect(used.status).to.equal(201);
    expect(used.body.contact).to.include({ email: 'ada@example.com', firstName: 'Ada' });

    const row = page.getByRole('row', { name: /Shop plugin/ });
    expect(await row.innerText()).to.include('integration').and.include('Active').and.include(value.slice(0, 8));
    await expectAccessible('API keys page');
    await shoot('api-keys');

    await row.getByRole('button', { name: 'Disable Shop plugin' }).click();
    const confirm = page.getByRole('dialog', { name: 'Disable “Shop plugin”?' });
    await expectAccessible('disable confirmation');
    await shoot('disable-key-dialog');
    await confirm.getByRole('button', { name: 'Disable key' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await row.getByText('Disabled').waitFor();

    const refused = await restUpsert(copied);
    expect(refused.status).to.equal(401);
    expect(refused.body).to.include({ error: 'API key is inactive', code: 'api_key_inactive' });

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    const facts = await page.locator('dl').innerText();
    expect(facts).to.include('Acme Ltd').and.include('500').and.include('Active runs now');
    await expectAccessible('account page');
    await shoot('account');
  });

  it('creates a key and copies it by keyboard alone', async () => {
    const user = await buildUser();
    await signIn(user.email, PASSWORD, '/dashboard/settings/developer/api-keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await tabTo(page.getByRole('button', { name: 'Create key' }), 'Create key');
    await page.keyboard.press('Enter');

    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.waitFor();
    expect(await create.getByLabel('Name').evaluate((el) => el === document.activeElement), 'focus starts on Name').to.equal(true);
    await page.keyboard.type('Runner by keyboard');
    await tabTo(create.getByRole('radio', { name: /Integration/ }), 'the kind');
    await page.keyboard.press('ArrowDown');
    expect(await create.getByRole('radio', { name: /Runner/ }).isChecked()).to.equal(true);
    await tabTo(create.getByRole('button', { name: 'Create key' }), 'the dialog\'s Create key');
    await page.keyboard.press('Enter');

    const shown = page.getByRole('dialog', { name: 'Key “Runner by keyboard” created' });
    await shown.waitFor();
    expect(await shown.getByRole('button', { name: 'Copy' }).evaluate((el) => el === document.activeElement), 'focus on Copy').to.equal(true);
    await page.keyboard.press('Enter');
    await shown.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(await shown.getByLabel('API key').inputValue());
    await page.keyboard.press('Escape');
    await shown.waitFor({ state: 'hidden' });
    const row = page.getByRole('row', { name: /Runner by keyboard/ });
    expect(await row.innerText()).to.include('runner');

    // Disable with a confirmation, by keyboard too; focus starts on Cancel, the safe choice.
    await row.getByRole('button', { name: 'Disable Runner by keyboard' }).focus();
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Disable “Runner by keyboard”?' });
    await confirm.waitFor();
    expect(await confirm.getByRole('button', { name: 'Cancel' }).evaluate((el) => el === document.activeElement)).to.equal(true);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await row.getByText('Disabled').waitFor();
  });

  it('says the same for an unknown email and a wrong password, then refuses after 10 failures', async () => {
    const user = await buildUser();
    await signIn('nobody@example.com', 'some password');
    await page.getByRole('alert').getByText(SIGN_IN_FAILED).waitFor();
    await expectAccessible('sign-in with an error');
    await shoot('sign-in-failed');
    for (let i = 1; i < 10; i += 1) {
      await page.getByLabel('Password').fill(`wrong password ${i}`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText(SIGN_IN_FAILED).waitFor();
    }
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText(SIGN_IN_LIMITED).waitFor();
    const [{ n }] = await select<{ n: unknown }>(testDb(), 'SELECT COUNT(*) AS n FROM user_sessions', []);
    expect(Number(n)).to.equal(0);
  });

  it('returns to sign-in when the session expires, and after signing out', async () => {
    const user = await buildUser();
    await signIn(user.email, PASSWORD, '/dashboard/settings/developer/api-keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await testDb().sequelize.query('UPDATE user_sessions SET idle_expires_at = ?', { replacements: [new Date(Date.now() - 1000)] });
    // The next call the page makes meets the 401. That is the click's, or a background refetch's
    // that may come first and take the page (and the link) away: either way, sign-in follows.
    await page
      .getByRole('link', { name: 'Account' })
      .click({ timeout: 5_000 })
      .catch(() => undefined);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the page the expired session was on.
    await page.getByRole('heading', { name: 'Account', level: 1 }).or(page.getByRole('heading', { name: 'API keys', level: 1 })).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const rows = await select<{ idle_expires_at: unknown }>(testDb(), 'SELECT idle_expires_at FROM user_sessions', []);
    expect(rows, 'only the expired session row is left').to.have.length(1);
    await page.goto(`${base}/dashboard/settings/developer/api-keys`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(page.url()).to.equal(`${base}/dashboard/sign-in?next=${encodeURIComponent('/settings/developer/api-keys')}`);
  });

  it('refuses a cross-origin POST and a non-JSON one, though the browser sends the cookie', async () => {
    const user = await buildUser();
    await signIn(user.email);
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    const sameOriginText = await page.evaluate(async () => {
      const res = await fetch('/trpc/dashboard.keys.create', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"name":"plain"}' });
      return res.status;
    });
    expect(sameOriginText).to.equal(415);

    // Another port on the same host is the same site: SameSite=Lax lets the cookie go along,
    // so only the Origin check stands between this page and the account.
    const { server: other, base: otherBase } = await listenOnLoopback(createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000 }, logger: silentLogger }));
    try {
      await page.goto(`${otherBase}/api/v1/openapi.json`);
      await page.evaluate(async (target) => {
        await fetch(`${target}/trpc/dashboard.keys.create`, {
          method: 'POST',
          mode: 'no-cors',
          credentials: 'include',
          headers: { 'content-type': 'text/plain' },
          body: '{"name":"forged"}',
        });
      }, base);
    } finally {
      await closeServer(other);
    }
    const keys = await select<{ name: string }>(testDb(), 'SELECT name FROM api_keys', []);
    expect(keys).to.deep.equal([]);
  });
});
