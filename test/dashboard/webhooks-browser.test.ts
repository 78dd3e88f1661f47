import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { WebhookDispatcher } from '../../src/services/webhooks/dispatcher';
import { silentLogger } from '../support/app';
import { browserSuite, expectAccessible, serveDashboard, shoot, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { startReceiver } from '../support/webhook-receiver';

// Settings -> Developer -> Webhooks in a real browser: add an endpoint (secret shown once),
// send a test event that a real local receiver gets, signed with that secret, see the attempt,
// rotate the secret, disable and delete, each with its confirmation. Screenshots beside the
// other dashboard pages' (test/support/browser.ts).

const TITLE = browserSuite('the dashboard\'s webhooks page in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  let page: Page;
  let dispatcher: WebhookDispatcher;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  // The receiver is on loopback over http: allowed only with the insecure switch, as in local work.
  const webhooks = { allowInsecure: true, now: () => new Date() };
  const dashboard = serveDashboard(async () => {
    dispatcher = new WebhookDispatcher(testDb(), { settings: webhooks, logger: silentLogger, timeoutMs: 2_000, pollMs: 50 });
    dispatcher.start();
    receiver = await startReceiver();
    return createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, webhooks });
  });
  after(async () => {
    await dispatcher?.stop(1_000);
    await receiver?.close();
  });

  async function look(name: string) {
    await expectAccessible(page, name);
    await shoot(page, name);
  }

  it('adds an endpoint, shows its secret once, delivers a signed test event, rotates, disables and deletes', async () => {
    const user = await buildUser();
    page = await dashboard.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.base });
    await signInAt(page, `${dashboard.base}/dashboard`, user.email);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    // The service's own rule comes back at the field.
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const add = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await add.getByLabel('URL').fill('ftp://example.com/hook');
    await add.getByRole('button', { name: 'Add endpoint' }).click();
    await add.getByText('Please correct the fields marked below.').waitFor();
    await add.getByLabel('URL').fill(receiver.url);
    await add.getByLabel('Description (optional)').fill('CRM sync');
    await add.getByLabel('Only these:').check();
    await add.getByLabel('contact.deleted').check();
    await add.getByLabel('webhook.test').check();
    await look('webhook-add-dialog');
    await add.getByRole('button', { name: 'Add endpoint' }).click();

    const shown = page.getByRole('dialog', { name: `Endpoint ${receiver.url} added` });
    await shown.waitFor();
    expect(await shown.innerText()).to.include('It will not be shown again');
    const secret = await shown.getByLabel('Signing secret').inputValue();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    await look('webhook-secret-dialog');
    await shown.getByRole('button', { name: 'Done' }).click();

    const [stored] = await select<{ id: string; url: string; event_types: string; description: string }>(testDb(), 'SELECT id, url, event_types, description FROM webhook_endpoints WHERE account_id = ?', [user.accountId]);
    expect(stored!.url).to.equal(receiver.url);
    expect(JSON.parse(stored!.event_types)).to.deep.equal(['contact.deleted', 'webhook.test']);
    expect(stored!.description).to.equal('CRM sync');
    const row = page.getByRole('row', { name: new RegExp(receiver.url) });
    await row.getByText('contact.deleted, webhook.test').waitFor();
    await row.getByText('Active').waitFor();
    await look('webhooks');

    // A test event, through the real dispatcher, signed with the secret the dialog showed.
    await row.getByRole('button', { name: `Deliveries of ${receiver.url}` }).click();
    const deliveries = page.getByRole('dialog', { name: `Deliveries to ${receiver.url}` });
    await deliveries.getByText('No attempts yet.').waitFor();
    await deliveries.getByRole('button', { name: 'Send test' }).click();
    await deliveries.getByText('Test event recorded').waitFor();
    for (let i = 0; i < 100 && receiver.received.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received).to.have.length(1);
    const delivered = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as { type: string };
    expect(delivered.type).to.equal('webhook.test');
    // The dispatcher records the attempt after the receiver has answered; the dialog shows
    // what is recorded when Refresh is pressed, so press it once the attempt is there.
    const attempts = () => select<{ response_status: number }>(testDb(), 'SELECT response_status FROM webhook_attempts WHERE endpoint_id = ?', [stored!.id]);
    for (let i = 0; i < 100 && (await attempts()).length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await attempts()).map((attempt) => attempt.response_status)).to.deep.equal([204]);
    await deliveries.getByRole('button', { name: 'Refresh' }).click();
    await deliveries.getByText('204 OK').waitFor();
    await look('webhook-deliveries-dialog');
    await deliveries.getByRole('button', { name: 'Close' }).click();

    await row.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
    await page.getByRole('dialog', { name: `Rotate the secret of ${receiver.url}?` }).getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByRole('dialog', { name: `New secret for ${receiver.url}` });
    const newSecret = await rotated.getByLabel('Signing secret').inputValue();
    expect(newSecret).to.match(/^whsec_/).and.not.equal(secret);
    await rotated.getByRole('button', { name: 'Done' }).click();

    await row.getByRole('button', { name: `Disable ${receiver.url}` }).click();
    const disable = page.getByRole('dialog', { name: `Disable ${receiver.url}?` });
    await look('webhook-disable-dialog');
    await disable.getByRole('button', { name: 'Disable endpoint' }).click();
    await row.getByText('Disabled').waitFor();
    const [afterDisable] = await select<{ enabled: number | boolean }>(testDb(), 'SELECT enabled FROM webhook_endpoints WHERE account_id = ?', [user.accountId]);
    expect(Boolean(afterDisable!.enabled)).to.equal(false);

    await row.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await page.getByRole('dialog', { name: `Delete ${receiver.url}?` }).getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No endpoints yet').waitFor();
    expect(await select(testDb(), 'SELECT id FROM webhook_endpoints WHERE account_id = ?', [user.accountId])).to.deep.equal([]);
  });
});
