import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { execute } from '../../src/db/sql/statements';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { caller, silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startReceiver } from '../support/webhook-receiver';
import { engineAt } from '../services/engine/support';

// Run timelines in a real browser (issue 29, "Run timeline"): a sequence triggered over REST,
// watched on the contact's page and the run's own page while the test moves the engine's clock;
// a webhook step that keeps failing, retrying with its last error and next attempt, paused,
// resumed and cancelled from the page, its attempts in the endpoint's Deliveries, and the step
// saying so once its endpoint is gone; each message as it was sent. Each view is checked with
// axe and photographed at 1280x800 and 390x844 (name-phone.png).

const TITLE = browserSuite('run timelines in the dashboard');
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
  beforeEach(async () => (page = await dashboard.newPage()));

  const look = (name: string) => lookAtBothWidths(page, name);

  async function signIn(accountId: string, path: string) {
    const user = await buildUser(accountId);
    await signInAt(page, `${dashboard.base}/dashboard${path}`, user.email);
  }

  async function trigger(key: string, sequenceId: string, body: Record<string, unknown>) {
    const res = await fetch(`${dashboard.base}/api/v1/sequences/${sequenceId}/trigger`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contact: body }),
    });
    expect(res.status, await res.clone().text()).to.equal(202);
    return (await res.json()) as { runId: string; contactId: string };
  }

  it("triggers a sequence over REST and watches its timeline complete on the contact's page and the run's own", async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const tenant = await buildTenant();
      const endpoint = (await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, WEBHOOKS)).webhook;
      const { sequence } = await caller(tenant.key).sequences.create({
        name: 'Onboarding',
        status: 'active',
        steps: [
          { id: 'settle', type: 'wait', duration: 'PT1H' },
          { id: 'welcomed', type: 'tag', add: ['welcomed'] },
          { id: 'vip', type: 'branch', if: { tag: 'vip' }, then: 'notify', else: 'done' },
          { id: 'notify', type: 'webhook', endpointId: endpoint.id },
          { id: 'done', type: 'exit' },
        ],
      });
      const { runId, contactId } = await trigger(tenant.key, sequence.id, { email: 'ada@example.com', firstName: 'Ada', tags: ['vip'] });
      const { engine, advance } = engineAt();
      await engine.runUntilIdle();

      await signIn(tenant.accountId, `/contacts/${contactId}`);
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
      await page.getByRole('button', { name: 'Timeline of the run in Onboarding' }).click();
      const inline = page.getByRole('region', { name: 'Timeline of the run in Onboarding' });
      await inline.getByText('Wait 1 hour').waitFor();
      await inline.getByText('waits until').waitFor();
      expect(await inline.locator('.event').count()).to.equal(1);
      await look('timeline-contact-waiting');

      // An hour later by the engine's clock: the wait ends, the tag, the branch and the webhook
      // follow, and the page, reading an active run again every few seconds, shows them.
      advance(3_600_001);
      await engine.runUntilIdle();
      await inline.getByText('Completed', { exact: true }).last().waitFor({ timeout: 10_000 });
      expect(await inline.locator('.event .step-id').allTextContents()).to.deep.equal(['settle', 'welcomed', 'vip', 'notify', 'done']);
      await inline.getByText(`POST to ${receiver.url}`).waitFor();
      await inline.getByText('The condition held: on to notify').waitFor();
      await inline.getByText('Answered 204').waitFor();
      expect(receiver.received).to.have.length(1);

      await inline.getByRole('link', { name: /Open the run’s page/ }).click();
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal(`/dashboard/runs/${runId}`);
      await page.getByRole('heading', { name: /Run Completed/ }).waitFor();
      expect(await page.getByRole('button', { name: /Pause|Resume|Cancel run/ }).count(), 'no buttons on an ended run').to.equal(0);
      await look('timeline-run-completed');
    } finally {
      await receiver.close();
    }
  });

  it('says a webhook step is retrying, with its last error and next attempt; pauses, resumes and cancels it; lists its attempts in Deliveries; names a deleted endpoint', async () => {
    const receiver = await startReceiver(() => 500);
    try {
      const tenant = await buildTenant();
      const endpoint = (await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, WEBHOOKS)).webhook;
      const { sequence } = await caller(tenant.key).sequences.create({
        name: 'CRM sync',
        status: 'active',
        steps: [{ id: 'sync', type: 'webhook', endpointId: endpoint.id }],
      });
      const { runId } = await trigger(tenant.key, sequence.id, { email: 'grace@example.com' });
      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      for (const wait of [5_000, 30_000, 120_000, 600_000]) {
        advance(wait + 1);
        await engine.runUntilIdle();
      }
      expect(receiver.received).to.have.length(5);
      const { run } = await caller(tenant.key).sequences.run({ id: sequence.id, runId });

      await signIn(tenant.accountId, `/runs/${runId}`);
      const retrying = page.locator('.retrying');
      await retrying.waitFor();
      expect(await retrying.innerText()).to.match(/^Retrying step sync: 5 failed attempts\. Last error: the receiver answered 500\. Next attempt .+\.$/);
      expect(await retrying.locator('time').getAttribute('datetime')).to.equal(run.retry!.nextAttemptAt);
      expect(await page.locator('.event .step-id').allTextContents()).to.deep.equal(['sync', 'sync', 'sync', 'sync', 'sync']);
      expect(await page.getByText(`POST to ${receiver.url}`).count()).to.equal(5);
      await look('timeline-retrying');

      await page.getByRole('button', { name: 'Pause the run of grace@example.com' }).click();
      await page.getByRole('heading', { name: /Run Paused/ }).waitFor();
      await retrying.getByText('The next attempt waits for the run to be resumed.').waitFor();
      await page.getByRole('button', { name: 'Resume the run of grace@example.com' }).click();
      await page.getByRole('heading', { name: /Run Running/ }).waitFor();
      // Resumed, the retry keeps its time: an hour after the fifth attempt, not now.
      await retrying.getByText('Next attempt').waitFor();
      const resumed = (await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run;
      expect(resumed.status).to.equal('running');
      expect(resumed.retry!.nextAttemptAt).to.equal(run.retry!.nextAttemptAt);
      expect(await retrying.locator('time').getAttribute('datetime')).to.equal(run.retry!.nextAttemptAt);

      // The endpoint's Deliveries: no event went to it, the step's five calls did.
      await page.goto(`${dashboard.base}/dashboard/settings/developer/webhooks`);
      await page.getByRole('button', { name: `Deliveries of ${receiver.url}` }).click();
      const dialog = page.getByRole('dialog');
      const calls = dialog.getByRole('group', { name: "Calls from sequences' webhook steps" });
      await calls.waitFor();
      expect(await calls.locator('tbody tr').count()).to.equal(5);
      expect(await calls.locator('tbody tr td:nth-child(3)').allTextContents()).to.deep.equal(['5', '4', '3', '2', '1']);
      await calls.getByText('the receiver answered 500').first().waitFor();
      // The last attempt's next try: the run's retry, kept across the pause and the resume.
      expect(await calls.locator('tbody tr').first().locator('td:nth-child(6) time').getAttribute('datetime')).to.equal(run.retry!.nextAttemptAt);
      await dialog.getByText('No event deliveries yet.').waitFor();
      await look('deliveries-step-calls');
      await dialog.getByRole('button', { name: 'Close' }).click();

      // The endpoint goes (as an operator could remove it in the database: the API refuses while
      // a sequence uses it): the step says so.
      await execute(testDb(), 'DELETE FROM webhook_endpoints WHERE id = ?', [endpoint.id]);
      await page.goto(`${dashboard.base}/dashboard/runs/${runId}`);
      await page.getByText(`POST to webhook endpoint ${endpoint.id}, which no longer exists`).first().waitFor();

      await page.getByRole('button', { name: 'Cancel run the run of grace@example.com' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel run' }).click();
      await page.getByRole('heading', { name: /Run Cancelled/ }).waitFor();
      expect(await retrying.count(), 'a cancelled run retries nothing').to.equal(0);
      expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.status).to.equal('cancelled');
      await look('timeline-endpoint-gone-cancelled');
    } finally {
      await receiver.close();
    }
  });

  it('shows each message as it was sent: the email rendered in a sandbox with its envelope, the WhatsApp request, each with its delivery status', async () => {
    const tenant = await buildTenant();
    // The email's html carries a script (raw, as a template may): the sandbox must not run it.
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [
        {
          id: 'hello',
          type: 'email',
          from: 'Shop <news@shop.example>',
          subject: 'Welcome, {{ contact.firstName }}',
          html: '<h1 style="font-family:sans-serif">Hello {{ contact.firstName }}</h1><p>Good to have you.</p>{{ "<script>parent.document.title = \'escaped\'</script>" | raw }}',
        },
        { id: 'chat', type: 'whatsapp', template: { name: 'welcome', language: { code: 'en' } } },
      ],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada', phone: '+4915112345678' });
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    // The engine sends both: no SMTP server and no WhatsApp token here, so each is captured,
    // whole, as a first start captures them.
    const { engine } = engineAt();
    await engine.runUntilIdle();
    expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run.status).to.equal('completed');
    const request = { messaging_product: 'whatsapp', recipient_type: 'individual', to: '4915112345678', type: 'template', template: { name: 'welcome', language: { code: 'en' } } };

    await signIn(tenant.accountId, `/runs/${run!.id}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const email = page.getByRole('region', { name: 'Email Welcome, Ada' });
    await email.getByText('Shop <news@shop.example>').waitFor();
    await email.getByText('Captured', { exact: true }).waitFor();
    const frame = email.locator('iframe');
    expect(await frame.getAttribute('sandbox')).to.equal('');
    await page.frameLocator('iframe[title="The email as sent: Welcome, Ada"]').getByRole('heading', { name: 'Hello Ada' }).waitFor();
    // The email's script never ran: the sandbox allows none.
    expect(await page.title()).to.not.contain('escaped');
    const whatsapp = page.getByRole('region', { name: 'WhatsApp message' });
    expect(JSON.parse(await whatsapp.getByLabel('The request sent to WhatsApp').innerText())).to.deep.include({ ...request, biz_opaque_callback_data: `run_${run!.id}_chat_1` });
    await look('timeline-messages');
  });

  it("names a split's variant, what a wait_for waits for, and its timeout path, on the run's page", async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Abandoned cart',
      status: 'active',
      steps: [
        {
          id: 'ab',
          type: 'split',
          variants: [
            { id: 'a', weight: 1, next: 'wait-checkout' },
            { id: 'b', weight: 1, next: 'wait-checkout' },
          ],
        },
        { id: 'wait-checkout', type: 'wait_for', activity: 'checkout_completed', match: { cartId: '{{ trigger.properties.cartId }}' }, timeout: 'PT3H', next: 'done', onTimeout: 'reminded' },
        { id: 'reminded', type: 'tag', add: ['reminded'] },
        { id: 'done', type: 'exit' },
      ],
    });
    // Enrolled over the API, the run has no trigger: its cartId renders empty and nothing
    // matches, so the wait ends at its timeout.
    const { runId } = await trigger(tenant.key, sequence.id, { email: 'cart@example.com' });
    const { engine, advance } = engineAt();
    await engine.runUntilIdle();
    const taken = (await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.executions[0]!;
    expect(taken.detail).to.have.property('to', 'wait-checkout');

    await signIn(tenant.accountId, `/runs/${runId}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page.getByText(`Took variant ${String(taken.detail!.variant)}: on to wait-checkout`).waitFor();
    await page.locator('.event').nth(1).getByText("Wait up to 3 hours for activity checkout_completed with cartId = the trigger's cartId; then done, on timeout reminded").waitFor();
    await look('timeline-wait-for-waiting');

    advance(3 * 3_600_000 + 1);
    await engine.runUntilIdle();
    await page.getByRole('heading', { name: /Run Completed/ }).waitFor({ timeout: 10_000 });
    expect(await page.locator('.event .step-id').allTextContents()).to.deep.equal(['ab', 'wait-checkout', 'reminded', 'done']);
    await page.getByText('Timed out: no checkout_completed came in time; on to reminded').waitFor();
    await look('timeline-wait-for-timed-out');
  });

  it('enrolls by cart_abandoned sent over REST, waits for that cart, and moves on its checkout, as the run\'s page shows', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Abandoned cart',
      status: 'active',
      entry: { activity: 'cart_abandoned' },
      steps: [
        { id: 'wait-checkout', type: 'wait_for', activity: 'checkout_completed', match: { cartId: '{{ trigger.properties.cartId }}' }, timeout: 'PT3H', next: 'done', onTimeout: 'reminded' },
        { id: 'reminded', type: 'tag', add: ['reminded'] },
        { id: 'done', type: 'exit' },
      ],
    } as never);
    const post = async (name: string, properties: Record<string, unknown>) => {
      const res = await fetch(`${dashboard.base}/api/v1/activities`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.key, 'content-type': 'application/json' },
        body: JSON.stringify({ contact: { email: 'cart@example.com' }, name, properties }),
      });
      expect(res.status, await res.clone().text()).to.equal(202);
      return ((await res.json()) as { activity: { id: string } }).activity;
    };
    const abandoned = await post('cart_abandoned', { cartId: 'c1', total: 42 });
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, advance } = engineAt();
    await engine.runUntilIdle();

    await signIn(tenant.accountId, `/runs/${run!.id}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page.getByText('Waiting for activity checkout_completed with cartId = "c1" at step wait-checkout').waitFor();
    await page.getByText(`Activity cart_abandoned ${abandoned.id}`).waitFor();
    await look('timeline-cart-waiting');

    // Another cart's checkout moves nothing; this cart's does, as it is recorded.
    await post('checkout_completed', { cartId: 'c2' });
    const checkout = await post('checkout_completed', { cartId: 'c1' });
    // The match made the run due at the API's (real) time: the engine's clock moves past it.
    advance(120_000);
    await engine.runUntilIdle();
    await page.reload();
    await page.getByRole('heading', { name: /Run Completed/ }).waitFor();
    expect(await page.locator('.event .step-id').allTextContents()).to.deep.equal(['wait-checkout', 'done']);
    await page.getByText(`Activity checkout_completed ${checkout.id} came: on to done`).waitFor();
    await look('timeline-cart-matched');
  });
});
