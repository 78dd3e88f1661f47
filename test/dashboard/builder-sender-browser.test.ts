import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { channelSettings } from '../support/channels';
import { buildDashboardTenant } from '../support/dashboard';

// An email step with no sender (issue 37, item 14), on a server without EMAIL_FROM: the builder
// says at the From field that the account has none (and links to Settings -> Channels) instead
// of promising "the account's sender"; activating the sequence is refused with the step named,
// and nothing changes; a From given at the step lets it through. With an account sender, the
// field names it.

describe(browserSuite('the builder and an email step without a sender'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard({ channels: channelSettings() });
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  async function draftWithEmail() {
    const { account, user, key } = await buildDashboardTenant();
    const created = await dashboard.rest(key, 'POST', '/sequences', { name: 'Welcome', steps: [{ id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' }] });
    expect(created.status).to.equal(201);
    return { user, key, id: created.body.sequence.id as string };
  }

  const builder = () => page.getByRole('region', { name: 'Builder' });
  const card = () => builder().locator('.flow-step').first();

  it('says there is no sender at the field, refuses to activate naming the step, and activates once the step has a From', async () => {
    const { user, key, id } = await draftWithEmail();
    await signInAt(page, `${dashboard.base}/dashboard/sequences/${id}`, user.email);
    await card().getByRole('button', { name: 'Edit step 1' }).click();
    const from = card().getByLabel('From (optional)');
    await card().getByText('This account has no sender yet: give a From here, or set one in Settings → Channels.', { exact: false }).waitFor();
    expect(await card().getByRole('link', { name: 'Settings → Channels' }).getAttribute('href')).to.equal('/dashboard/settings/channels');
    expect(await card().getByText("Empty: the account's sender").count()).to.equal(0);

    const status = page.getByRole('region', { name: 'Change status' });
    await status.getByLabel('New status').selectOption('active');
    await status.getByRole('button', { name: 'Change status' }).click();
    const alert = status.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).to.match(/^Step "hello" has no sender: give the step a From, or set the account's sender/);
    await lookAtBothWidths(page, 'builder-no-sender');
    await closeUp(page, card(), 'builder-no-sender-card');
    expect((await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence.status).to.equal('draft');

    await from.fill('Acme <news@acme.example>');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.', { exact: false }).waitFor();
    await status.getByLabel('New status').selectOption('active');
    const answered = page.waitForResponse((response) => response.url().includes('dashboard.sequences.setStatus'));
    await status.getByRole('button', { name: 'Change status' }).click();
    expect((await answered).status()).to.equal(200);
    expect((await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence.status).to.equal('active');
  });

  it('names the account\'s sender at the field when it has one', async () => {
    const { user, key, id } = await draftWithEmail();
    expect((await dashboard.rest(key, 'PUT', '/channels/email', { from: 'hello@acme.example' })).status).to.equal(200);
    await signInAt(page, `${dashboard.base}/dashboard/sequences/${id}`, user.email);
    await card().getByRole('button', { name: 'Edit step 1' }).click();
    await card().getByText("Empty: the account's sender, hello@acme.example.").waitFor();
    expect(await card().getByText('This account has no sender yet', { exact: false }).count()).to.equal(0);
  });
});
