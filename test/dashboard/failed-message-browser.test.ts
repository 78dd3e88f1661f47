import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { putWhatsAppChannel } from '../../src/services/channels/whatsapp-channel';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import { startGraphStandIn, type GraphStandIn } from '../support/whatsapp-graph';
import { engineAt } from '../services/engine/support';

// Issue 37, item 16: a failed message says so once. Graph refused a WhatsApp step's message
// (a 400, code 131026): the run's page said "Not sent yet: the message is rendered when it goes
// out" under a message that never will, and gave the error three times (the message, the step,
// the run's end). Now the failure shows once, by the message, and nothing says "Not sent yet".

describe(browserSuite('a failed message on the run page'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();
  let graph: GraphStandIn;
  before(async () => {
    graph = await startGraphStandIn();
  });
  // graph is unset when the harness's before() skipped the suite (no chromium).
  after(() => graph?.close());

  it('shows a message Graph refused as failed, its error once, and no "Not sent yet"', async () => {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const tenant = await buildTenant();
    const api = caller(tenant.key);
    const { sequence } = await api.sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [{ id: 'chat', type: 'whatsapp', template: { name: 'welcome', language: { code: 'en' } } }],
    });
    await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', phone: '+49 151 1234 5678' });
    await api.sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await api.sequences.runs({ id: sequence.id })).runs;
    graph.refuse(400, 131026, 'Message undeliverable');
    const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    await engine.runUntilIdle();
    expect((await api.sequences.run({ id: sequence.id, runId: run!.id })).run.status).to.equal('failed');
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();

    await signInAt(page, `${dashboard.base}/dashboard/runs/${run!.id}`, user.email);
    await page.getByRole('heading', { name: /Run Failed/ }).waitFor();
    const message = page.getByRole('region', { name: 'WhatsApp message' });
    await message.getByText('Failed', { exact: true }).waitFor();
    const timeline = await page.locator('.timeline-wrap').innerText();
    expect(timeline).to.not.include('Not sent yet');
    expect(timeline.split('Message undeliverable').length - 1, timeline).to.equal(1);
    expect(await message.innerText()).to.include('Message undeliverable');
    await lookAtBothWidths(page, 'failed-message');
  });

  it('shows an email the relay refused as failed, its error once, and no "Not sent yet"', async () => {
    const relay = await startSmtpServer(() => '554 5.7.1 Message rejected as spam');
    try {
      const settings = channelSettings({ emailFrom: 'Shop <news@shop.example>', smtpUrl: relay.url });
      const tenant = await buildTenant();
      const api = caller(tenant.key);
      const { sequence } = await api.sequences.create({
        name: 'Welcome',
        status: 'active',
        steps: [{ id: 'hello', type: 'email', subject: 'Welcome', html: '<p>Hello</p>' }],
      });
      const contact = await buildContact(tenant.accountId, { email: 'ada@example.com' });
      await api.sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const [run] = (await api.sequences.runs({ id: sequence.id })).runs;
      const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
      await engine.runUntilIdle();
      await engine.stop(50);
      const user = await buildUser(tenant.accountId);
      const page = await dashboard.newPage();

      await signInAt(page, `${dashboard.base}/dashboard/runs/${run!.id}`, user.email);
      const message = page.getByRole('region', { name: 'Email Welcome' });
      await message.getByText('Failed', { exact: true }).waitFor();
      const timeline = await page.locator('.timeline-wrap').innerText();
      expect(timeline).to.not.include('Not sent yet');
      // The relay's banner is not shown: the service's words for a policy refusal are.
      expect(timeline.split("refused by the receiver's policy").length - 1, timeline).to.equal(1);
      await lookAtBothWidths(page, 'failed-email');
    } finally {
      await relay.close();
    }
  });
});
