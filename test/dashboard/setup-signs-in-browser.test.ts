import { expect } from 'chai';
import { createUser, setupUrl } from '../../src/services/dashboard/users';
import { browserSuite, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { PASSWORD } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildAccount } from '../support/factories';

// Issue 37, item 18: setting a password signs you in. The setup link's page ended on "Password
// set" and a Sign in button, and the password had to be typed again; now setting it starts a
// session, as sign-in does, and the person lands on the dashboard's home, still signed in after
// a reload.

describe(browserSuite('the setup link signs its person in'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it('sets the password from the setup link and lands on Contacts, signed in', async () => {
    const account = await buildAccount({ name: 'Acme Ltd' });
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'new-person@example.com' });
    const page = await dashboard.newPage();
    await page.goto(setupUrl(dashboard.base, setupToken));
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await page.getByText('This link sets the password for new-person@example.com.').waitFor();
    await lookAtBothWidths(page, 'setup-link');
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();

    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/contacts');
    await page.locator('.topbar').getByText('new-person@example.com').waitFor();
    expect(await page.getByRole('heading', { name: 'Password set' }).count()).to.equal(0);
    await lookAtBothWidths(page, 'setup-signed-in');

    await page.reload();
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.locator('.topbar').getByText('new-person@example.com').waitFor();
  });
});
