import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { toDate } from '../../../src/db/sql/rows';
import { execute, select } from '../../../src/db/sql/statements';
import { putWhatsAppChannel } from '../../../src/services/channels/whatsapp-channel';
import { caller, silentLogger } from '../../support/app';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { metaSignature, startGraphStandIn, statusWebhookPayload, type GraphStandIn } from '../../support/whatsapp-graph';
import { driveUntil, engineAt, enrolledRun } from './support';

// WhatsApp steps through the outbound layer (docs/channels.md "WhatsApp"), against a stand-in
// of Graph's messages endpoint (test/support/whatsapp-graph.ts) that checks the documented
// request and the bearer token, and answers as Graph does; then Meta's signed status webhook
// posted back to /webhooks/whatsapp.

const TEMPLATE = { name: 'welcome', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Hi {{ contact.firstName }}' }] }] };
const WHATSAPP = { id: 'chat', type: 'whatsapp', template: TEMPLATE };
const AFTER = { id: 'after', type: 'tag', add: ['after'] };
const APP_SECRET = 'meta-app-secret-0123456789abcdef';

async function messagesOf(runId: string) {
  return select<{ id: string; status: string; error: string | null; to_address: string; message_key: string; provider_message_id: string | null; content: string | null }>(
    testDb(),
    'SELECT id, status, error, to_address, message_key, provider_message_id, content FROM messages WHERE run_id = ? ORDER BY created_at',
    [runId],
  );
}

describe('sequence engine: whatsapp steps', () => {
  let graph: GraphStandIn;
  beforeEach(async () => {
    graph = await startGraphStandIn({ otherPhoneNumberIds: ['100000000000002'] });
  });
  afterEach(() => graph.close());

  // An engine whose WHATSAPP_API_URL is the stand-in, and a run of an account whose WhatsApp
  // channel is the stand-in's number and token.
  async function setUp(steps: unknown[] = [WHATSAPP, AFTER], contact: Record<string, unknown> = { firstName: 'Ada', phone: '+49 151 1234 5678' }, engineOptions: { timeoutMs?: number } = {}) {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    const run = await enrolledRun(steps, {}, contact);
    await putWhatsAppChannel(testDb(), { accountId: run.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
    // Made after the enrolment: its clock starts past the run's due time.
    const engine = engineAt(Date.now() + 1, {
      messages: { settings, outboxDir },
      webhook: { timeoutMs: engineOptions.timeoutMs ?? 2_000, allowInsecure: true, random: () => 0.5 },
    });
    return { ...engine, run, settings, outboxDir };
  }

  it('sends the documented template request with the account\'s bearer token; the message is `sent` with Graph\'s id and the run goes on', async () => {
    const { engine, run } = await setUp();
    await engine.runUntilIdle();
    const key = `run_${run.runId}_chat_1`;
    expect(graph.requests).to.have.length(1);
    const [seen] = graph.requests;
    expect(seen!.path).to.equal(`/v21.0/${graph.phoneNumberId}/messages`);
    expect(seen!.headers.authorization).to.equal(`Bearer ${graph.accessToken}`);
    expect(seen!.json).to.deep.equal({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '4915112345678',
      type: 'template',
      template: { ...TEMPLATE, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Hi Ada' }] }] },
      biz_opaque_callback_data: key,
    });
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    const chat = detail.executions.find((execution: { stepId: string }) => execution.stepId === 'chat');
    expect(chat!.message).to.include({ channel: 'whatsapp', status: 'sent', to: '4915112345678', providerMessageId: 'wamid.HBgL000001', error: null });
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'sent', message_key: key, provider_message_id: 'wamid.HBgL000001' });
    expect(JSON.parse(message!.content!)).to.deep.equal({ request: seen!.json });
  });

  it('skips the step, with its reason, for a contact unsubscribed from WhatsApp (read when it goes), with no phone, or with a number that is not international; the runs go on and Graph is not called', async () => {
    const cases = [
      { phone: '+49 151 1234 5678', unsubscribe: true, reason: 'unsubscribed' },
      { phone: null, unsubscribe: false, reason: 'no_phone' },
      { phone: '0151 1234 5678', unsubscribe: false, reason: 'invalid_phone' },
    ];
    for (const { phone, unsubscribe, reason } of cases) {
      const { engine, run } = await setUp([WHATSAPP, AFTER], { phone });
      // Behind the API's back: only the sender's own read at send time can see it.
      if (unsubscribe) await execute(testDb(), "UPDATE contacts SET whatsapp_subscription_status = 'unsubscribed' WHERE id = ?", [run.contact.id]);
      await engine.runUntilIdle();
      const detail = await run.timeline();
      expect(detail.status, reason).to.equal('completed');
      const chat = detail.executions.find((execution: { stepId: string }) => execution.stepId === 'chat');
      expect(chat, reason).to.include({ status: 'skipped', reason });
      const [message] = await messagesOf(run.runId);
      expect(message, reason).to.include({ status: 'skipped', error: reason });
    }
    expect(graph.requests).to.have.length(0);
  });

  it('retries a 429 (code 130429) on the webhook schedule with the same callback data: one message, sent once', async () => {
    const { engine, run, advance } = await setUp();
    graph.rateLimited();
    await engine.runUntilIdle();
    let [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'queued' });
    expect(message!.error).to.contain('130429');
    expect((await run.timeline()).status).to.equal('running');
    graph.answer({ kind: 'ok' });
    // The schedule's first wait: 5 s (±10 %; the test's random gives 5 s exactly).
    advance(4_000);
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(1);
    advance(1_001);
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(2);
    const keys = graph.requests.map((seen) => (seen.json as { biz_opaque_callback_data: string }).biz_opaque_callback_data);
    expect(keys).to.deep.equal([`run_${run.runId}_chat_1`, `run_${run.runId}_chat_1`]);
    const messages = await messagesOf(run.runId);
    expect(messages).to.have.length(1);
    [message] = messages;
    expect(message).to.include({ status: 'sent', provider_message_id: 'wamid.HBgL000001', error: null });
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('retries a 5xx too, and bounds a Graph that never answers (a retry, not a hang)', async () => {
    const { engine, run, advance } = await setUp([WHATSAPP, AFTER], undefined, { timeoutMs: 300 });
    graph.hang();
    const began = Date.now();
    await engine.runUntilIdle();
    expect(Date.now() - began, 'bounded by the request timeout').to.be.below(5_000);
    let [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'queued' });
    expect(message!.error).to.match(/timeout|timed out/i);
    graph.serverError(503);
    advance(5_001);
    await engine.runUntilIdle();
    [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'queued' });
    expect(message!.error).to.contain('131000');
    graph.answer({ kind: 'ok' });
    advance(30_001);
    await engine.runUntilIdle();
    [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'sent' });
    expect(graph.requests).to.have.length(3);
    expect(new Set(graph.requests.map((seen) => (seen.json as { biz_opaque_callback_data: string }).biz_opaque_callback_data)).size).to.equal(1);
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('fails the step at once on another 4xx, with Graph\'s code in the reason; the message is failed', async () => {
    const { engine, run } = await setUp();
    graph.refuse(400, 131026, 'Message undeliverable');
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'failed', currentStepId: 'chat' });
    expect(detail.reason).to.contain('131026: Message undeliverable');
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'failed' });
    expect(message!.error).to.contain('131026');
  });

  it("opts the contact out when Graph answers a send with 131050: the contact unsubscribed from WhatsApp and the number suppressed, as the status webhook's 131050 does", async () => {
    const { engine, run } = await setUp();
    graph.refuse(400, 131050, 'User has stopped marketing messages');
    await engine.runUntilIdle();
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'failed' });
    const [contact] = await select<{ whatsapp_subscription_status: string }>(testDb(), 'SELECT whatsapp_subscription_status FROM contacts WHERE id = ?', [run.contact.id]);
    expect(contact!.whatsapp_subscription_status).to.equal('unsubscribed');
    const suppressions = await select<{ address: string; reason: string; source: string }>(testDb(), 'SELECT address, reason, source FROM suppressions WHERE account_id = ?', [run.accountId]);
    expect(suppressions).to.deep.equal([{ address: '+4915112345678', reason: 'opt_out', source: `message:${message!.id}` }]);
  });

  it('suppresses the number as invalid after Graph answers three sends in a row with 131026', async () => {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    const first = await enrolledRun([WHATSAPP], {}, { phone: '+49 151 1234 5678' });
    await putWhatsAppChannel(testDb(), { accountId: first.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
    graph.refuse(400, 131026, 'Message undeliverable');
    const reasons = async () => (await select<{ reason: string }>(testDb(), 'SELECT reason FROM suppressions WHERE account_id = ?', [first.accountId])).map((row) => row.reason);
    for (let sent = 1; sent <= 3; sent += 1) {
      if (sent > 1) await caller(first.key).sequences.enroll({ id: first.sequence.id, contactIds: [first.contact.id] });
      const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir }, webhook: { timeoutMs: 2_000, allowInsecure: true, random: () => 0.5 } });
      await engine.runUntilIdle();
      expect(await reasons()).to.deep.equal(sent < 3 ? [] : ['invalid']);
    }
    expect(graph.requests).to.have.length(3);
  });

  it('never sends a message that has already ended without being sent (made cancelled while it waited for its retry)', async () => {
    const { engine, run, advance } = await setUp();
    graph.rateLimited();
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(1);
    await execute(testDb(), "UPDATE messages SET status = 'cancelled' WHERE run_id = ?", [run.runId]);
    graph.answer({ kind: 'ok' });
    advance(5_001);
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(1);
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'cancelled' });
    const detail = await run.timeline();
    expect(detail.status).to.equal('failed');
    expect(detail.reason).to.contain('the message is already cancelled');
  });

  it('with no token for the account, captures the request body as JSON under the outbox folder, the message `captured`', async () => {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    const run = await enrolledRun([WHATSAPP, AFTER], {}, { firstName: 'Ada', phone: '+4915112345678' });
    const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir } });
    await engine.runUntilIdle();
    expect(graph.requests).to.have.length(0);
    const key = `run_${run.runId}_chat_1`;
    expect(readdirSync(outboxDir)).to.deep.equal([`${key}.whatsapp.json`]);
    const captured = JSON.parse(readFileSync(path.join(outboxDir, `${key}.whatsapp.json`), 'utf8'));
    expect(captured.body).to.deep.include({ messaging_product: 'whatsapp', to: '4915112345678', type: 'template', biz_opaque_callback_data: key });
    expect(captured.body.template.components[0].parameters[0].text).to.equal('Hi Ada');
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'captured' });
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('a signed status webhook posted back moves the message to delivered, then read; a late delivered never overwrites read', async () => {
    const { engine, run } = await setUp();
    await engine.runUntilIdle();
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, whatsappWebhook: { appSecret: APP_SECRET } }, logger: silentLogger });
    const key = `run_${run.runId}_chat_1`;
    const post = (status: 'delivered' | 'read') => {
      const body = JSON.stringify(statusWebhookPayload([{ id: 'wamid.HBgL000001', status, bizOpaqueCallbackData: key }], graph.phoneNumberId));
      return request(app).post('/webhooks/whatsapp').set('content-type', 'application/json').set('x-hub-signature-256', metaSignature(body, APP_SECRET)).send(body);
    };
    const status = async () => (await messagesOf(run.runId))[0]!.status;
    expect((await post('delivered')).status).to.equal(200);
    expect(await status()).to.equal('delivered');
    expect((await post('read')).status).to.equal(200);
    expect(await status()).to.equal('read');
    expect((await post('delivered')).status).to.equal(200);
    expect(await status()).to.equal('read');
    const chat = (await run.timeline()).executions.find((execution: { stepId: string }) => execution.stepId === 'chat');
    expect(chat!.message).to.include({ status: 'read' });
  });

  it("another account's messages keep flowing while one account's Graph number hangs", async () => {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    graph.answerFor(graph.phoneNumberId, { kind: 'hang' });
    const accounts: Array<{ tenant: Awaited<ReturnType<typeof buildTenant>>; statuses: () => Promise<string[]> }> = [];
    for (const phoneNumberId of [graph.phoneNumberId, '100000000000002']) {
      const tenant = await buildTenant();
      await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId, accessToken: graph.accessToken }, settings);
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Chat', status: 'active', steps: [WHATSAPP] } as never);
      const contacts = [];
      for (let i = 0; i < 8; i += 1) contacts.push(await buildContact(tenant.accountId, { phone: `+4915112345${String(i).padStart(3, '0')}` }));
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((contact) => contact.id) });
      accounts.push({ tenant, statuses: async () => (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs.map((r) => r.status) });
    }
    const { engine, clock } = engineAt(Date.now() + 1, {
      messages: { settings, outboxDir },
      webhook: { timeoutMs: 600_000, allowInsecure: true, random: () => 0.5 },
      outbound: { perTarget: 4 },
    });
    try {
      engine.start();
      await driveUntil(clock, async () => (await accounts[1]!.statuses()).every((status) => status === 'completed'));
      const byNumber = (number: string) => graph.requests.filter((seen) => seen.path.includes(`/${number}/`)).length;
      expect(byNumber('100000000000002')).to.equal(8);
      // The hanging number holds its own account's slots only.
      expect(byNumber(graph.phoneNumberId)).to.equal(4);
      expect((await accounts[0]!.statuses()).every((status) => status === 'running')).to.equal(true);
    } finally {
      await engine.stop(50);
    }
  });

  it("starts an account's messages within its maxPerSecond (2 per second of the engine's clock), none dropped, while another account at 20/s is not held back", async () => {
    const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    const accounts: Array<{ tenant: Awaited<ReturnType<typeof buildTenant>>; statuses: () => Promise<string[]> }> = [];
    for (const [phoneNumberId, maxPerSecond] of [[graph.phoneNumberId, 2], ['100000000000002', 20]] as const) {
      const tenant = await buildTenant();
      await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId, accessToken: graph.accessToken, maxPerSecond }, settings);
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Chat', status: 'active', steps: [WHATSAPP] } as never);
      const contacts = [];
      for (let i = 0; i < 6; i += 1) contacts.push(await buildContact(tenant.accountId, { phone: `+4915112345${String(i).padStart(3, '0')}` }));
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((contact) => contact.id) });
      accounts.push({ tenant, statuses: async () => (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs.map((r) => r.status) });
    }
    // At the start of a second of the engine's clock.
    const { engine, clock } = engineAt(Math.ceil((Date.now() + 1) / 1000) * 1000, { messages: { settings, outboxDir } });
    const start = clock.now();
    try {
      engine.start();
      await driveUntil(clock, async () => {
        const all = [...(await accounts[0]!.statuses()), ...(await accounts[1]!.statuses())];
        return all.every((status) => status === 'completed');
      });
    } finally {
      await engine.stop(50);
    }
    const startedPerSecond = async (accountId: string) => {
      const rows = await select<{ started_at: unknown }>(testDb(), "SELECT started_at FROM outbox WHERE account_id = ? AND channel = 'whatsapp'", [accountId]);
      const counts: number[] = [];
      for (const row of rows) {
        const second = Math.floor((toDate(row.started_at).getTime() - start) / 1000);
        counts[second] = (counts[second] ?? 0) + 1;
      }
      return Array.from(counts, (count) => count ?? 0);
    };
    expect(await startedPerSecond(accounts[0]!.tenant.accountId)).to.deep.equal([2, 2, 2]);
    expect(await startedPerSecond(accounts[1]!.tenant.accountId)).to.deep.equal([6]);
    expect(graph.requests).to.have.length(12);
  });
});
