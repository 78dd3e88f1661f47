import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { putWhatsAppChannel } from '../../src/services/channels/whatsapp-channel';
import { SmtpTransports } from '../../src/services/messages/smtp-transports';
import { caller } from '../support/app';
import { channelSettings } from '../support/channels';
import { buildUser, dashboardApp, mutate, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startGraphStandIn, type GraphStandIn } from '../support/whatsapp-graph';

// dashboard.messages.sendTest for a WhatsApp step: the template message as edited, its header,
// body and button parameters rendered for the preview contact, POSTed once to Graph (the local
// stand-in) for the number typed, and recorded as a test message; captured as JSON without a
// token; Graph's refusal a 409 naming its code.

const TEMPLATE = {
  name: 'order_update',
  language: { code: 'en' },
  components: [
    { type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName }}' }] },
    { type: 'body', parameters: [{ type: 'text', text: 'Hi {{ contact.firstName }}' }] },
    { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '{{ contact.customFields.order }}' }] },
  ],
};

describe('dashboard.messages.sendTest for a WhatsApp step', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(options: { token?: boolean } = {}) {
    const graph: GraphStandIn = await startGraphStandIn();
    cleanups.push(() => graph.close());
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const transports = new SmtpTransports({ connectionMs: 2_000, greetingMs: 2_000, socketMs: 2_000 });
    cleanups.push(() => transports.close());
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-test-sends-wa-'));
    const tenant = await buildTenant();
    if (options.token !== false) await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Orders',
      status: 'active',
      steps: [{ id: 'notify', type: 'whatsapp', template: { name: 'order_update', language: { code: 'en' } } }],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada', phone: '+44 7700 900111', customFields: { order: 'A-17' } });
    const user = await buildUser(tenant.accountId);
    const app = dashboardApp({ channels: settings, testSends: { transports, outboxDir } });
    const cookie = await signInCookie(app, user.email);
    const sendTest = (input: Record<string, unknown> = {}) =>
      mutate(app, 'dashboard.messages.sendTest', { sequenceId: sequence.id, stepId: 'notify', contactId: contact.id, step: { type: 'whatsapp', template: TEMPLATE }, to: '+44 7700 900222', ...input }, cookie);
    const rows = () =>
      testDb().sequelize.query('SELECT test, run_id, sequence_id, channel, status, to_address, error FROM messages WHERE account_id = ?', {
        replacements: [tenant.accountId],
        type: 'SELECT' as never,
      }) as unknown as Promise<Array<{ test: unknown; run_id: string | null; sequence_id: string | null; channel: string; status: string; to_address: string; error: string | null }>>;
    return { graph, outboxDir, sendTest, rows, tenant, contact };
  }

  it('sends the template as edited, rendered for the contact, to the typed number through Graph, and records a test', async () => {
    const { graph, sendTest, rows, tenant, contact } = await setUp();
    const res = await sendTest();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.test).to.include({ channel: 'whatsapp', status: 'sent', to: '447700900222', subject: null, captured: null });
    expect(graph.requests).to.have.length(1);
    const sent = graph.requests[0]!;
    expect(sent.path).to.equal(`/v21.0/${graph.phoneNumberId}/messages`);
    expect(sent.headers.authorization).to.equal(`Bearer ${graph.accessToken}`);
    const body = sent.json as { to: string; template: { components: unknown[] }; biz_opaque_callback_data: string };
    expect(body.to).to.equal('447700900222');
    expect(body.template.components).to.deep.equal([
      { type: 'header', parameters: [{ type: 'text', text: 'Ada' }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Hi Ada' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'A-17' }] },
    ]);
    expect(body.biz_opaque_callback_data).to.match(/^test-/);
    expect(res.body.result.data.test.response).to.be.a('string').and.not.equal('');
    const [row] = await rows();
    expect(row).to.include({ channel: 'whatsapp', status: 'sent', to_address: '447700900222', run_id: null, sequence_id: null });
    expect(Boolean(Number(row!.test))).to.equal(true);
    // A test, not a message of Ada's.
    expect((await caller(tenant.key).contacts.messages({ id: contact.id })).messages).to.deep.equal([]);
  });

  it('captures the request as JSON when the account has no WhatsApp token', async () => {
    const { graph, outboxDir, sendTest, rows } = await setUp({ token: false });
    const res = await sendTest();
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.test).to.include({ channel: 'whatsapp', status: 'captured', response: null });
    expect(graph.requests).to.have.length(0);
    const [file] = readdirSync(outboxDir);
    expect(path.join(outboxDir, file!)).to.equal(res.body.result.data.test.captured);
    const captured = JSON.parse(readFileSync(path.join(outboxDir, file!), 'utf8'));
    expect(captured.body.to).to.equal('447700900222');
    expect((await rows())[0]).to.include({ status: 'captured' });
  });

  it('answers Graph\'s refusal with a 409 naming its code, and records the test as failed', async () => {
    const { graph, sendTest, rows } = await setUp();
    graph.refuse(400, 132001, 'Template name does not exist in the translation');
    const res = await sendTest();
    expect(res.status).to.equal(409);
    expect(res.body.error.message).to.match(/^The test was not sent: 132001/);
    expect((await rows())[0]).to.include({ status: 'failed' });
  });

  it('refuses a number that is not an international one, and writes nothing', async () => {
    const { graph, sendTest, rows } = await setUp();
    const res = await sendTest({ to: '07700 900222' });
    expect(res.status).to.equal(400);
    expect(res.body.error.data.details).to.deep.equal([{ path: 'to', message: 'must be a phone number in international form, such as +44 7700 900123' }]);
    expect(graph.requests).to.have.length(0);
    expect(await rows()).to.deep.equal([]);
  });
});
