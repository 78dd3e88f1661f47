import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { parseJson } from '../../../src/db/sql/rows';
import { select } from '../../../src/db/sql/statements';
import { createMetrics } from '../../../src/metrics/metrics';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { putWhatsAppChannel } from '../../../src/services/channels/whatsapp-channel';
import { caller } from '../../support/app';
import { channelSettings, channelsApi } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { startGraphStandIn, type GraphStandIn } from '../../support/whatsapp-graph';
import { engineAt, enrolledRun } from './support';

// A sender-side failure pauses the account's channel (or one step's template) instead of
// failing its contacts (docs/channels.md "What pauses a channel, and how it resumes"): against a
// real SMTP server that asks for a login, and the Graph stand-in. The engine's clock is moved
// by hand; nothing sleeps.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };
const AFTER = { id: 'after', type: 'tag', add: ['after'] };
const TEMPLATE = { name: 'welcome', language: { code: 'en_US' } };

async function eventsOf(accountId: string, types: string[]) {
  const rows = await select<{ type: string; data: unknown }>(testDb(), 'SELECT type, data FROM events WHERE account_id = ? AND type IN (?) ORDER BY seq', [accountId, types]);
  return rows.map((row) => ({ type: row.type, data: parseJson<Record<string, unknown>>(row.data) }));
}

async function messagesOf(accountId: string) {
  return select<{ status: string; error: string | null; step_id: string }>(testDb(), 'SELECT status, error, step_id FROM messages WHERE account_id = ? ORDER BY created_at', [accountId]);
}

async function executionsOf(runId: string) {
  return select<{ step_id: string; status: string }>(testDb(), 'SELECT step_id, status FROM run_step_executions WHERE run_id = ? ORDER BY started_at', [runId]);
}

const counted = async (registry: Registry, name: string) => (await registry.getSingleMetric(name)!.get()).values.filter((value) => value.value > 0).map((value) => ({ labels: value.labels, value: value.value }));

describe('channel pauses: a sender-side failure never touches contacts', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  // An SMTP server that asks for a login (`password` is what it takes now), an account whose
  // relay it is (with `urlPassword`), and an engine with real metrics.
  async function emailSetUp(urlPassword: string, contacts = 1) {
    const password = { value: 'right' };
    const server = await startSmtpServer(undefined, { auth: { user: 'shop', password: () => password.value } });
    const metrics = createMetrics(testDb());
    const { registry } = metrics;
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>' });
    const run = await enrolledRun([EMAIL, AFTER]);
    const more = [];
    for (let i = 1; i < contacts; i += 1) {
      const contact = await buildContact(run.accountId);
      await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: [contact.id] });
      more.push(contact);
    }
    const relay = (pass: string) => `${server.url.replace('smtp://', `smtp://shop:${pass}@`)}`;
    await putEmailChannel(testDb(), { accountId: run.accountId, from: 'shop@example.com', smtpUrl: relay(urlPassword) }, settings);
    const parts = engineAt(Date.now() + 1, {
      messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 }, metrics: metrics.messages },
    });
    cleanups.push(() => server.close(), () => parts.engine.stop(50));
    return { ...parts, server, password, settings, run, registry, relay };
  }

  it('a refused login (535 5.7.8) pauses the email channel: messages stay queued, runs wait `channel_paused`, no attempt counted, nothing suppressed, one channel.paused', async () => {
    const { engine, advance, server, run, registry } = await emailSetUp('wrong', 3);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.logins.some((login) => !login.ok)).to.equal(true);
    expect(server.attempts).to.have.length(0);
    const messages = await messagesOf(run.accountId);
    expect(messages).to.have.length(3);
    for (const message of messages) expect(message).to.include({ status: 'queued', error: 'paused: smtp auth failed (535 5.7.8)' });
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'running', currentStepId: 'mail', waitingFor: 'channel_paused', dueAt: null });
    expect(detail.retry).to.equal(null);
    expect(await executionsOf(run.runId)).to.deep.equal([]);
    const events = await eventsOf(run.accountId, ['channel.paused', 'run.step_failed', 'message.failed', 'message.bounced', 'contact.suppressed']);
    expect(events).to.deep.equal([
      { type: 'channel.paused', data: { channel: 'email', code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)', sequenceId: null, stepId: null } },
    ]);
    expect(JSON.stringify(events)).not.to.contain('banner');
    expect(await select(testDb(), 'SELECT id FROM suppressions WHERE account_id = ?', [run.accountId])).to.have.length(0);
    expect(await counted(registry, 'channel_pauses_total')).to.deep.equal([{ labels: { channel: 'email', code: 'smtp_auth_failed' }, value: 1 }]);

    // Hours later, nothing was claimed: only the probes logged in (and were refused).
    advance(3 * 3_600_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(0);
    const [send] = await select<{ attempt: number | string; status: string }>(testDb(), 'SELECT attempt, status FROM outbox WHERE run_id = ?', [run.runId]);
    expect(Number(send!.attempt)).to.equal(0);
    expect(send!.status).to.equal('queued');
    expect((await run.timeline()).status).to.equal('running');
  });

  it('saving the channel\'s settings resumes it (channel.resumed by settings): every message goes once', async () => {
    const { engine, advance, server, run, settings, relay } = await emailSetUp('wrong', 2);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.attempts).to.have.length(0);
    const res = await channelsApi(settings)(run.key).put('/channels/email').send({ from: 'shop@example.com', smtpUrl: relay('right') });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(2);
    expect(new Set(server.received.map((mail) => mail.parsed.messageId)).size).to.equal(2);
    expect((await run.timeline()).status).to.equal('completed');
    for (const message of await messagesOf(run.accountId)) expect(message).to.include({ status: 'sent', error: null });
    expect((await eventsOf(run.accountId, ['channel.resumed'])).map((event) => event.data)).to.deep.equal([{ channel: 'email', by: 'settings', sequenceId: null, stepId: null }]);
  });

  it('a probe on the retry schedule (a login, no message) that succeeds resumes it (channel.resumed by probe)', async () => {
    const { engine, advance, server, run, password } = await emailSetUp('right');
    password.value = 'rotated';
    advance(1_000);
    await engine.runUntilIdle();
    expect(await messagesOf(run.accountId)).to.deep.equal([{ status: 'queued', error: 'paused: smtp auth failed (535 5.7.8)', step_id: 'mail' }]);
    // The first probe, 5 s on: still refused.
    const loginsBefore = server.logins.length;
    advance(5_000);
    await engine.runUntilIdle();
    expect(server.logins.length).to.equal(loginsBefore + 1);
    expect(server.attempts).to.have.length(0);
    // The relay takes our password again; the next probe (30 s on) logs in, and the mail goes.
    password.value = 'right';
    advance(30_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    expect((await run.timeline()).status).to.equal('completed');
    expect((await eventsOf(run.accountId, ['channel.resumed'])).map((event) => event.data)).to.deep.equal([{ channel: 'email', by: 'probe', sequenceId: null, stepId: null }]);
  });

  it('a relay that cannot be reached is retried on the schedule, then pauses the channel instead of failing the run', async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: `smtp://127.0.0.1:${port}` });
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 1_000, greetingMs: 1_000, socketMs: 1_000 } } });
    cleanups.push(() => engine.stop(50));
    const run = await enrolledRun([EMAIL, AFTER]);
    for (const wait of [1_000, 6_000, 33_000, 132_000, 660_000, 3_960_000]) {
      advance(wait);
      await engine.runUntilIdle();
    }
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'running', waitingFor: 'channel_paused' });
    expect((await executionsOf(run.runId)).map((execution) => execution.status)).to.deep.equal(['failed', 'failed', 'failed', 'failed', 'failed']);
    expect(await messagesOf(run.accountId)).to.deep.equal([{ status: 'queued', error: 'paused: connection refused (ECONNREFUSED)', step_id: 'mail' }]);
    const [paused] = await eventsOf(run.accountId, ['channel.paused']);
    expect(paused!.data).to.deep.include({ channel: 'email', code: 'smtp_unreachable', reason: 'connection refused (ECONNREFUSED)' });
  });

  describe('WhatsApp', () => {
    let graph: GraphStandIn;
    beforeEach(async () => {
      graph = await startGraphStandIn();
    });
    afterEach(() => graph.close());

    async function waSetUp(steps: unknown[]) {
      const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
      const run = await enrolledRun(steps, {}, { phone: '+49 151 1234 5678' });
      await putWhatsAppChannel(testDb(), { accountId: run.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
      const parts = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
      cleanups.push(() => parts.engine.stop(50));
      return { ...parts, run, settings };
    }

    it('190 (token expired) pauses the channel; the probe (a GET of the number with the token) resumes it once Graph takes the token', async () => {
      const { engine, advance, run } = await waSetUp([{ id: 'chat', type: 'whatsapp', template: TEMPLATE }, AFTER]);
      graph.refuse(401, 190, 'Error validating access token: Session has expired');
      await engine.runUntilIdle();
      expect(await messagesOf(run.accountId)).to.deep.equal([{ status: 'queued', error: 'paused: the access token expired or was revoked (190)', step_id: 'chat' }]);
      expect(await run.timeline()).to.include({ status: 'running', waitingFor: 'channel_paused' });
      advance(5_000);
      await engine.runUntilIdle();
      const probes = graph.requests.filter((request) => request.method === 'GET');
      expect(probes).to.have.length(1);
      expect(probes[0]!.path).to.equal(`/v21.0/${graph.phoneNumberId}?fields=id`);
      expect(probes[0]!.headers.authorization).to.equal(`Bearer ${graph.accessToken}`);
      graph.answer({ kind: 'ok' });
      advance(30_000);
      await engine.runUntilIdle();
      expect((await messagesOf(run.accountId))[0]).to.include({ status: 'sent' });
      expect((await run.timeline()).status).to.equal('completed');
      expect((await eventsOf(run.accountId, ['channel.paused', 'channel.resumed'])).map((event) => [event.type, event.data.code ?? event.data.by])).to.deep.equal([
        ['channel.paused', 'whatsapp_token_expired'],
        ['channel.resumed', 'probe'],
      ]);
    });

    it('saving the WhatsApp settings (PUT /channels/whatsapp) resumes a paused channel', async () => {
      const { engine, advance, run, settings } = await waSetUp([{ id: 'chat', type: 'whatsapp', template: TEMPLATE }, AFTER]);
      graph.refuse(400, 368, 'Temporarily blocked for policies violations');
      await engine.runUntilIdle();
      expect(await run.timeline()).to.include({ status: 'running', waitingFor: 'channel_paused' });
      graph.answer({ kind: 'ok' });
      const res = await channelsApi(settings)(run.key).put('/channels/whatsapp').send({ phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      advance(1_000);
      await engine.runUntilIdle();
      expect((await run.timeline()).status).to.equal('completed');
      expect(graph.requests.filter((request) => request.method === 'GET')).to.have.length(0);
      expect((await eventsOf(run.accountId, ['channel.paused', 'channel.resumed'])).map((event) => [event.type, event.data.code ?? event.data.by])).to.deep.equal([
        ['channel.paused', 'whatsapp_account_restricted'],
        ['channel.resumed', 'settings'],
      ]);
    });

    it('a template error (132001) pauses that step\'s template only; saving the sequence resumes it with the step as saved', async () => {
      const { engine, advance, run } = await waSetUp([{ id: 'chat', type: 'whatsapp', template: { name: 'no_such_template', language: { code: 'en_US' } } }, AFTER]);
      graph.refuse(404, 132001, 'Template name does not exist in the translation');
      await engine.runUntilIdle();
      expect(await run.timeline()).to.include({ status: 'running', waitingFor: 'channel_paused' });
      const [paused] = await eventsOf(run.accountId, ['channel.paused']);
      expect(paused!.data).to.deep.equal({ channel: 'whatsapp', code: 'whatsapp_template_error', reason: "Graph refused the step's template (132001)", sequenceId: run.sequence.id, stepId: 'chat' });
      // Another step of the account's WhatsApp still sends.
      graph.answer({ kind: 'ok' });
      const other = await caller(run.key).sequences.create({ name: 'Other', status: 'active', steps: [{ id: 'hello', type: 'whatsapp', template: TEMPLATE }] } as never);
      const contact = await buildContact(run.accountId, { phone: '+49 151 8765 4321' });
      await caller(run.key).sequences.enroll({ id: other.sequence.id, contactIds: [contact.id] });
      advance(1_000);
      await engine.runUntilIdle();
      expect(graph.requests.filter((request) => request.method === 'POST').map((request) => (request.json as { template: { name: string } }).template.name)).to.deep.equal(['no_such_template', 'welcome']);
      // No probe for a template: hours later it still waits.
      advance(3_600_000);
      await engine.runUntilIdle();
      expect(graph.requests.filter((request) => request.method === 'GET')).to.have.length(0);
      expect(await run.timeline()).to.include({ waitingFor: 'channel_paused' });
      // The step saved with the right template name: resumed, and the fix is what goes out.
      await caller(run.key).sequences.update({ id: run.sequence.id, steps: [{ id: 'chat', type: 'whatsapp', template: TEMPLATE }, AFTER] } as never);
      advance(1_000);
      await engine.runUntilIdle();
      const posted = graph.requests.filter((request) => request.method === 'POST').map((request) => (request.json as { template: { name: string } }).template.name);
      expect(posted).to.deep.equal(['no_such_template', 'welcome', 'welcome']);
      expect((await run.timeline()).status).to.equal('completed');
      expect((await eventsOf(run.accountId, ['channel.resumed'])).map((event) => event.data)).to.deep.equal([{ channel: 'whatsapp', by: 'step', sequenceId: run.sequence.id, stepId: 'chat' }]);
    });
  });
});
