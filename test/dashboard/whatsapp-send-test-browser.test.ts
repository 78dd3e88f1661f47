import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { putWhatsAppChannel } from '../../src/services/channels/whatsapp-channel';
import { caller, silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startGraphStandIn, type GraphStandIn } from '../support/whatsapp-graph';
import { builderOf, cardOf } from '../support/builder-page';

// A WhatsApp step in the builder, as an email step is (issue 37, item 13): its header and URL
// button parameters have fields of their own, and "Send a test" in the message editor sends the
// template as edited, rendered for the preview contact, to a WhatsApp number typed there, through
// the account's WhatsApp number (Graph's local stand-in here), where it answered a 400 before.

const TITLE = browserSuite('a WhatsApp step\'s header and button parameters, and its test send');

describe(TITLE, function () {
  this.timeout(120_000);
  let graph: GraphStandIn;
  // One set of settings: the token is sealed with its secrets key, and opened with the same.
  let settings: ReturnType<typeof channelSettings>;
  const dashboard = serveDashboard(async () => {
    graph = await startGraphStandIn();
    settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    return createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      channels: settings,
      testSends: { outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-wa-test-outbox-')) },
    });
  });
  after(async () => {
    await graph?.close();
  });
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));
  const builder = () => builderOf(page);
  const card = (n: number) => cardOf(page, n);

  it('fills a header and a URL button parameter, sends a test to a typed number through Graph, and saves the parameters', async () => {
    const tenant = await buildTenant();
    await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Orders',
      status: 'active',
      steps: [{ id: 'notify', type: 'whatsapp', template: { name: 'order_update', language: { code: 'en' } } }],
    });
    await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada', phone: '+44 7700 900111', customFields: { order: 'A-17' } });
    const user = await buildUser(tenant.accountId);
    await signInAt(page, `${dashboard.base}/dashboard/sequences/${sequence.id}`, user.email);
    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    const step = card(1);

    await step.getByRole('button', { name: 'Add a header parameter' }).click();
    await step.getByLabel('Header parameter 1').fill('{{ contact.firstName }}');
    await step.getByRole('button', { name: 'Add a URL button parameter' }).click();
    expect(await step.getByLabel('Place of URL button 0').locator('option:checked').innerText()).to.equal('Button 0');
    await step.getByLabel('URL button 0 parameter').fill('{{ contact.customFields.order }}');
    await lookAtBothWidths(page, 'whatsapp-parameters');

    await step.getByRole('button', { name: 'Open the editor with a live preview' }).click();
    await step.getByRole('textbox', { name: 'Header parameter 1' }).waitFor();
    await step.getByLabel('Preview for the contact').fill('ada');
    await step.getByRole('list', { name: 'Matching contacts' }).getByRole('button', { name: 'ada@example.com' }).click();
    await step.getByLabel('The request that would be sent to WhatsApp').getByText('"A-17"').waitFor();

    await step.getByLabel('Send to the WhatsApp number').fill('+44 7700 900222');
    await step.getByRole('button', { name: 'Send a test' }).click();
    await step.getByRole('status').getByText(/^Test sent to WhatsApp number \+447700900222/).waitFor();
    expect(graph.requests).to.have.length(1);
    const sent = graph.requests[0]!.json as { to: string; template: { components: unknown[] } };
    expect(sent.to).to.equal('447700900222');
    expect(sent.template.components).to.deep.equal([
      { type: 'header', parameters: [{ type: 'text', text: 'Ada' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'A-17' }] },
    ]);
    await step.getByRole('button', { name: 'Send a test' }).scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'whatsapp-send-test');

    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const saved = (await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.steps[0] as { template: { components: unknown[] } };
    expect(saved.template.components).to.deep.equal([
      { type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName }}' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '{{ contact.customFields.order }}' }] },
    ]);
  });
});
