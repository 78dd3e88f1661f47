import { expect } from 'chai';
import type { Server } from 'node:http';
import request from 'supertest';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { createMetrics, type Metrics } from '../../src/metrics/metrics';
import { markSent } from '../../src/services/messages/message-store';
import { UNDELIVERABLE_IN_A_ROW } from '../../src/services/messages/whatsapp-recipient-failures';
import { silentLogger } from '../support/app';
import { channelSettings } from '../support/channels';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';
import { messageFixture } from '../support/messages';
import { parseExposition, valueOf } from '../support/prometheus-text';
import { inboundWebhookPayload, startGraphStandIn, statusWebhookPayload, type GraphStandIn, type InboundReport } from '../support/whatsapp-graph';
import { allEvents } from '../services/events/support';
import { engineAt, enrolledRun } from '../services/engine/support';
import { putWhatsAppChannel } from '../../src/services/channels/whatsapp-channel';

// WhatsApp opt-outs and sender health (docs/channels.md "WhatsApp opt-outs and sender health"):
// the Graph stand-in posts inbound messages and statuses, signed as Meta signs them, to the
// service's /webhooks/whatsapp on loopback.

const APP_SECRET = 'meta-app-secret-0123456789abcdef';
const VERIFY_TOKEN = 'verify-token-abcdef';
const METRICS_TOKEN = 'metrics-token-0123456789';
const OTHER_NUMBER_ID = '100000000000002';
const FROM = '4915112345678';

const undeliverable = [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }];
const stopped = [{ code: 131050, title: 'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business' }];

async function contactRow(id: string) {
  const [row] = await select<{ whatsapp_subscription_status: string; email_subscription_status: string }>(
    testDb(),
    'SELECT whatsapp_subscription_status, email_subscription_status FROM contacts WHERE id = ?',
    [id],
  );
  return row!;
}

async function suppressionsOf(accountId: string) {
  return select<{ channel: string; address: string; reason: string; source: string | null }>(
    testDb(),
    'SELECT channel, address, reason, source FROM suppressions WHERE account_id = ? ORDER BY address',
    [accountId],
  );
}

describe('WhatsApp opt-outs and sender health (/webhooks/whatsapp)', () => {
  let graph: GraphStandIn;
  let server: Server;
  let base: string;
  let metrics: Metrics;
  const settings = channelSettings();

  beforeEach(async () => {
    graph = await startGraphStandIn({ otherPhoneNumberIds: [OTHER_NUMBER_ID] });
    metrics = createMetrics(testDb());
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000, whatsappWebhook: { appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN }, metricsToken: METRICS_TOKEN },
      logger: silentLogger,
      channels: { ...settings, whatsappApiUrl: graph.apiUrl },
      metrics,
    });
    ({ server, base } = await listenOnLoopback(app));
  });
  afterEach(async () => {
    await closeServer(server);
    await graph.close();
  });

  const webhook = () => `${base}/webhooks/whatsapp`;
  const inbound = (messages: InboundReport[], secret = APP_SECRET, phoneNumberId = graph.phoneNumberId) =>
    graph.postWebhook(webhook(), inboundWebhookPayload(messages, phoneNumberId), secret);
  const scrape = async () => parseExposition((await request(server).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`)).text);

  // An account whose business number is the stand-in's (WHATSAPP_APP_SECRET checks its posts).
  async function account(extra: { appSecret?: string; optOutKeywords?: string[]; phoneNumberId?: string } = {}) {
    const tenant = await buildTenant();
    const put = await request(server)
      .put('/api/v1/channels/whatsapp')
      .set('x-api-key', tenant.key)
      .send({ accessToken: graph.accessToken, ...extra, phoneNumberId: extra.phoneNumberId ?? graph.phoneNumberId });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    return tenant;
  }

  describe('inbound opt-outs', () => {
    it('unsubscribes the contact and suppresses the number on a "STOP" text, with the one-click unsubscribe\'s events', async () => {
      const { accountId } = await account();
      const contact = await buildContact(accountId, { phone: '+49 151 1234 5678' });
      const res = await inbound([{ type: 'text', from: FROM, id: 'wamid.STOP1', body: 'STOP' }]);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ received: 0, applied: 0, unknown: 0, messages: { received: 1, optedOut: 1, recorded: 0, unknown: 0 } });
      expect(await contactRow(contact.id)).to.deep.equal({ whatsapp_subscription_status: 'unsubscribed', email_subscription_status: 'subscribed' });
      expect(await suppressionsOf(accountId)).to.deep.equal([{ channel: 'whatsapp', address: '+4915112345678', reason: 'opt_out', source: 'provider:whatsapp:wamid.STOP1' }]);
      const events = (await allEvents(accountId)).filter((e) => e.type !== 'contact.created');
      expect(events.map((e) => e.type)).to.deep.equal(['contact.updated', 'contact.subscription_changed', 'contact.suppressed']);
      expect(events[0]!.data).to.deep.include({ changedFields: ['whatsappSubscriptionStatus'], source: 'whatsapp_opt_out' });
      expect(events[1]!.data).to.deep.include({ channel: 'whatsapp', from: 'subscribed', to: 'unsubscribed', source: 'whatsapp_opt_out' });
      expect((events[2]!.data as { contact: { id: string } }).contact.id).to.equal(contact.id);

      // Meta sends the post again: nothing more changes.
      const again = await inbound([{ type: 'text', from: FROM, id: 'wamid.STOP1', body: 'STOP' }]);
      expect(again.status).to.equal(200);
      expect((await allEvents(accountId)).filter((e) => e.type !== 'contact.created')).to.have.length(3);
      expect(valueOf(await scrape(), 'whatsapp_inbound_messages_total', { outcome: 'opt_out' })).to.equal(2);
      expect(valueOf(await scrape(), 'whatsapp_opt_outs_total', { source: 'keyword' })).to.equal(2);
    });

    it('matches " stop ", "Arrêt !" and "baja" whatever the case, accents and spaces, for every contact storing the number in any form', async () => {
      const { accountId } = await account();
      const plus = await buildContact(accountId, { phone: '+49 151 1234 5678' });
      const zeros = await buildContact(accountId, { phone: '0049-151-1234-5678' });
      const bare = await buildContact(accountId, { phone: '4915112345678' });
      const french = await buildContact(accountId, { phone: '+33 6 12 34 56 78' });
      const spanish = await buildContact(accountId, { phone: '+34 612 345 678' });
      const other = await buildContact(accountId, { phone: '+49 151 9999 0000' });
      const res = await inbound([
        { type: 'text', from: FROM, body: ' stop ' },
        { type: 'text', from: '33612345678', body: 'Arrêt !' },
        { type: 'text', from: '34612345678', body: 'baja' },
      ]);
      expect(res.body.messages).to.deep.equal({ received: 3, optedOut: 3, recorded: 0, unknown: 0 });
      for (const contact of [plus, zeros, bare, french, spanish]) expect((await contactRow(contact.id)).whatsapp_subscription_status, contact.phone!).to.equal('unsubscribed');
      expect((await contactRow(other.id)).whatsapp_subscription_status).to.equal('subscribed');
      expect((await suppressionsOf(accountId)).map((s) => [s.address, s.reason])).to.deep.equal([
        ['+33612345678', 'opt_out'],
        ['+34612345678', 'opt_out'],
        ['+4915112345678', 'opt_out'],
      ]);
    });

    it('takes a "Stop promotions" quick reply as an opt-out once its payload is one of the account\'s keywords, and an interactive reply by its id', async () => {
      const tenant = await account();
      const contact = await buildContact(tenant.accountId, { phone: '+49 151 1234 5678' });
      const button: InboundReport = { type: 'button', from: FROM, payload: 'STOP_PROMOTIONS', text: 'Stop promotions' };
      // With the defaults, the button is a message like any other.
      expect((await inbound([button])).body.messages).to.deep.include({ optedOut: 0, recorded: 1 });
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('subscribed');

      const put = await request(server)
        .put('/api/v1/channels/whatsapp')
        .set('x-api-key', tenant.key)
        .send({ phoneNumberId: graph.phoneNumberId, optOutKeywords: ['STOP', 'STOP_PROMOTIONS', 'optout-list'] });
      expect(put.body.channel.optOutKeywords).to.deep.equal(['STOP', 'STOP_PROMOTIONS', 'optout-list']);
      expect((await inbound([button])).body.messages).to.deep.include({ optedOut: 1, recorded: 0 });
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('unsubscribed');

      const second = await buildContact(tenant.accountId, { phone: '+49 151 0000 1111' });
      const reply = await inbound([{ type: 'interactive', from: '4915100001111', reply: 'list_reply', replyId: 'optout-list', title: 'No more offers' }]);
      expect(reply.body.messages).to.deep.include({ optedOut: 1 });
      expect((await contactRow(second.id)).whatsapp_subscription_status).to.equal('unsubscribed');
      // The account's list replaced the defaults: BAJA is a message now.
      expect((await inbound([{ type: 'text', from: FROM, body: 'BAJA' }])).body.messages).to.deep.include({ optedOut: 0, recorded: 1 });
    });

    it('suppresses a number that no contact has when it sends STOP, and counts it', async () => {
      const { accountId } = await account();
      const res = await inbound([{ type: 'text', from: '447700900123', body: 'Stop' }]);
      expect(res.body.messages).to.deep.equal({ received: 1, optedOut: 1, recorded: 0, unknown: 0 });
      expect((await suppressionsOf(accountId)).map((s) => [s.address, s.reason])).to.deep.equal([['+447700900123', 'opt_out']]);
      // A contact created later with that number is never sent to (the step reads the list).
    });
  });

  it('takes a post of 200 messages (100 opt-outs, 100 others) in a handful of statements', async function () {
    this.timeout(60_000);
    const { accountId } = await account();
    const numbers = Array.from({ length: 200 }, (_, i) => `4915100${String(i).padStart(4, '0')}`);
    for (const number of numbers) await buildContact(accountId, { phone: `+${number}` });
    const messages: InboundReport[] = numbers.map((from, i) => (i % 2 === 0 ? { type: 'text', from, body: 'STOP' } : { type: 'text', from, body: `Hello ${i}` }));
    const { result, queries } = await captureQueries(() => inbound(messages));
    expect(result.body.messages).to.deep.equal({ received: 200, optedOut: 100, recorded: 100, unknown: 0 });
    // Whatever the number of messages: the account's lookup, the contacts' locks and one UPDATE,
    // their mirrors, the list's insert and read, the contacts' lookup, the events; then the
    // replies' `whatsapp.replied` (the messages they answer, and one intake transaction).
    expect(queries.length, queries.join('\n')).to.be.at.most(30);
    const [{ n }] = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM contacts WHERE account_id = ? AND whatsapp_subscription_status = 'unsubscribed'", [accountId]);
    expect(Number(n)).to.equal(100);
    expect(await suppressionsOf(accountId)).to.have.length(100);
  });

  describe('other inbound messages', () => {
    it('records message.received for the contact found by phone, with the text, the type and the time', async () => {
      const { accountId } = await account();
      const contact = await buildContact(accountId, { phone: '004915112345678' });
      const res = await inbound([
        { type: 'text', from: FROM, id: 'wamid.HELLO', body: 'Stop sending me the blue one?', timestamp: 1795430400 },
        { type: 'image', from: FROM, id: 'wamid.IMG', caption: 'this one' },
      ]);
      expect(res.body.messages).to.deep.equal({ received: 2, optedOut: 0, recorded: 2, unknown: 0 });
      const received = (await allEvents(accountId)).filter((e) => e.type === 'message.received');
      expect(received.map((e) => e.data)).to.deep.equal([
        {
          contactId: contact.id,
          channel: 'whatsapp',
          from: '+4915112345678',
          providerMessageId: 'wamid.HELLO',
          type: 'text',
          text: 'Stop sending me the blue one?',
          payload: null,
          receivedAt: '2026-11-23T10:40:00.000Z',
        },
        { ...(received[1]!.data as object), contactId: contact.id, providerMessageId: 'wamid.IMG', type: 'image', text: 'this one', payload: null },
      ]);
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('subscribed');
      expect(await suppressionsOf(accountId)).to.deep.equal([]);
      expect(valueOf(await scrape(), 'whatsapp_inbound_messages_total', { outcome: 'received' })).to.equal(2);
    });

    it('counts and drops a message from a number no contact has, and one for a number ID of no account', async () => {
      const { accountId } = await account();
      await buildContact(accountId, { phone: '+49 151 1234 5678' });
      const unknownNumber = await inbound([{ type: 'text', from: '447700900123', body: 'Hello?' }]);
      expect(unknownNumber.body.messages).to.deep.equal({ received: 1, optedOut: 0, recorded: 0, unknown: 1 });
      const noAccount = await inbound([{ type: 'text', from: FROM, body: 'STOP' }], APP_SECRET, '999999999999999');
      expect(noAccount.status).to.equal(200);
      expect(noAccount.body.messages).to.deep.equal({ received: 1, optedOut: 0, recorded: 0, unknown: 1 });
      expect((await allEvents(accountId)).filter((e) => e.type !== 'contact.created')).to.deep.equal([]);
      expect(await suppressionsOf(accountId)).to.deep.equal([]);
      const scraped = await scrape();
      expect(valueOf(scraped, 'whatsapp_inbound_messages_total', { outcome: 'unknown_number' })).to.equal(1);
      expect(valueOf(scraped, 'whatsapp_inbound_messages_total', { outcome: 'unknown_account' })).to.equal(1);
    });
  });

  describe('statuses about the recipient', () => {
    async function sentMessages(count: number) {
      const fixture = await messageFixture({ phone: '+49 151 1234 5678' });
      const ids: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const message = await fixture.queue();
        await withTransaction(testDb(), (transaction) => markSent(testDb(), [{ id: message.id, providerMessageId: `wamid.R${i}` }], { now: new Date() }, transaction));
        ids.push(message.id);
      }
      return { ...fixture, ids };
    }
    const status = (reports: Parameters<typeof statusWebhookPayload>[0]) => graph.postWebhook(webhook(), statusWebhookPayload(reports, graph.phoneNumberId), APP_SECRET);

    it('opts the contact out on a failed status with 131050, and suppresses the number with its message as the source', async () => {
      const { accountId, contact, ids } = await sentMessages(1);
      const res = await status([{ id: 'wamid.R0', status: 'failed', errors: stopped }]);
      expect(res.body).to.deep.equal({ received: 1, applied: 1, unknown: 0 });
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('unsubscribed');
      expect(await suppressionsOf(accountId)).to.deep.equal([{ channel: 'whatsapp', address: '+4915112345678', reason: 'opt_out', source: `message:${ids[0]}` }]);
      const types = (await allEvents(accountId)).map((e) => e.type).filter((t) => t !== 'contact.created' && !t.startsWith('run.'));
      expect(types).to.deep.equal(['message.sent', 'message.failed', 'contact.updated', 'contact.subscription_changed', 'contact.suppressed']);
      expect(valueOf(await scrape(), 'whatsapp_opt_outs_total', { source: 'status' })).to.equal(1);
    });

    it(`suppresses the number as invalid after ${UNDELIVERABLE_IN_A_ROW} times 131026 in a row, and not when a delivered comes between`, async () => {
      const { accountId, contact, ids } = await sentMessages(7);
      const fail = (i: number) => status([{ id: `wamid.R${i}`, status: 'failed', errors: undeliverable }]);
      await fail(0);
      await fail(1);
      await status([{ id: 'wamid.R2', status: 'delivered' }]);
      await fail(3);
      await fail(4);
      expect(await suppressionsOf(accountId)).to.deep.equal([]);
      const [counter] = await select<{ consecutive: number }>(testDb(), 'SELECT consecutive FROM whatsapp_recipient_failures WHERE account_id = ?', [accountId]);
      expect(Number(counter!.consecutive)).to.equal(2);
      // The same failure posted again counts once (the message was failed already).
      await fail(4);
      expect(await suppressionsOf(accountId)).to.deep.equal([]);
      await fail(5);
      expect(await suppressionsOf(accountId)).to.deep.equal([{ channel: 'whatsapp', address: '+4915112345678', reason: 'invalid', source: `message:${ids[5]}` }]);
      // Invalid is not an opt-out: the contact's status stays.
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('subscribed');
      expect(valueOf(await scrape(), 'whatsapp_numbers_invalid_total', {})).to.equal(1);
    });

    it('passes over a status naming another account\'s message when the post is signed with an account\'s own secret', async () => {
      const { ids } = await sentMessages(1);
      await account({ appSecret: 'tenant-own-secret-42', phoneNumberId: OTHER_NUMBER_ID });
      const forged = await graph.postWebhook(webhook(), statusWebhookPayload([{ id: 'wamid.R0', status: 'failed', errors: stopped }], OTHER_NUMBER_ID), 'tenant-own-secret-42');
      expect(forged.status).to.equal(200);
      expect(forged.body).to.deep.equal({ received: 1, applied: 0, unknown: 1 });
      const [row] = await select<{ status: string }>(testDb(), 'SELECT status FROM messages WHERE id = ?', [ids[0]]);
      expect(row!.status).to.equal('sent');
    });
  });

  it('skips a later WhatsApp step for the contact that sent STOP (unsubscribed), and Graph is not called', async () => {
    const template = { name: 'welcome', language: { code: 'en_US' } };
    const run = await enrolledRun([{ id: 'chat', type: 'whatsapp', template }, { id: 'after', type: 'tag', add: ['after'] }], {}, { phone: '+49 151 1234 5678' });
    const channels = { ...settings, whatsappApiUrl: graph.apiUrl };
    await putWhatsAppChannel(testDb(), { accountId: run.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, channels);
    expect((await inbound([{ type: 'text', from: FROM, body: 'Stop' }])).status).to.equal(200);
    const { engine } = engineAt(Date.now() + 1, { messages: { settings: channels, outboxDir: '/nonexistent-outbox' } });
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    const chat = detail.executions.find((execution: { stepId: string }) => execution.stepId === 'chat');
    expect(chat!.message).to.include({ channel: 'whatsapp', status: 'skipped', error: 'unsubscribed' });
    expect(graph.requests.filter((r) => r.path.endsWith('/messages'))).to.deep.equal([]);
  });

  describe('per-account app secret and verify token', () => {
    it('checks a post naming an account\'s number with that account\'s own secret: another account\'s, or the server\'s, is a 401 that writes nothing', async () => {
      const own = await account({ appSecret: 'account-a-secret-0001' });
      const contact = await buildContact(own.accountId, { phone: '+49 151 1234 5678' });
      await account({ appSecret: 'account-b-secret-0002', phoneNumberId: OTHER_NUMBER_ID });
      for (const secret of ['account-b-secret-0002', APP_SECRET]) {
        const res = await inbound([{ type: 'text', from: FROM, body: 'STOP' }], secret);
        expect([res.status, (res.body as { code: string }).code], secret).to.deep.equal([401, 'invalid_signature']);
      }
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('subscribed');
      expect(await suppressionsOf(own.accountId)).to.deep.equal([]);
      const signed = await inbound([{ type: 'text', from: FROM, body: 'STOP' }], 'account-a-secret-0001');
      expect(signed.status).to.equal(200);
      expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('unsubscribed');
      // The other account's number has its own secret too: the server's does not sign for it.
      const other = await inbound([{ type: 'text', from: FROM, body: 'hello' }], APP_SECRET, OTHER_NUMBER_ID);
      expect(other.status).to.equal(401);
    });

    it('keeps the server\'s secret for accounts that set none, and answers 404 when no secret fits anywhere', async () => {
      const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000 }, logger: silentLogger, channels: settings });
      const { server: bare, base: bareBase } = await listenOnLoopback(app);
      try {
        const { accountId } = await account({ appSecret: 'account-a-secret-0001' });
        const contact = await buildContact(accountId, { phone: '+49 151 1234 5678' });
        // No WHATSAPP_APP_SECRET: a number of no account has no secret to check with.
        const none = await graph.postWebhook(`${bareBase}/webhooks/whatsapp`, inboundWebhookPayload([{ type: 'text', from: FROM, body: 'STOP' }], '999999999999999'), APP_SECRET);
        expect(none.status).to.equal(404);
        // The account's own secret works without it.
        const ok = await graph.postWebhook(`${bareBase}/webhooks/whatsapp`, inboundWebhookPayload([{ type: 'text', from: FROM, body: 'STOP' }], graph.phoneNumberId), 'account-a-secret-0001');
        expect(ok.status).to.equal(200);
        expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('unsubscribed');
      } finally {
        await closeServer(bare);
      }
    });

    it('drops the inbound messages of a number ID two accounts claim under one secret, and applies neither', async () => {
      const first = await account();
      const second = await account();
      const a = await buildContact(first.accountId, { phone: '+49 151 1234 5678' });
      const b = await buildContact(second.accountId, { phone: '+49 151 1234 5678' });
      const res = await inbound([{ type: 'text', from: FROM, body: 'STOP' }]);
      expect(res.body.messages).to.deep.equal({ received: 1, optedOut: 0, recorded: 0, unknown: 1 });
      for (const contact of [a, b]) expect((await contactRow(contact.id)).whatsapp_subscription_status).to.equal('subscribed');
    });

    it('answers Meta\'s handshake for an account\'s own verify token as for the server\'s, and 403 for another', async () => {
      const tenant = await buildTenant();
      await request(server)
        .put('/api/v1/channels/whatsapp')
        .set('x-api-key', tenant.key)
        .send({ phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken, verifyToken: 'tenant-verify-token-77' });
      const handshake = (token: string) => request(server).get('/webhooks/whatsapp').query({ 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '1158201444' });
      for (const token of ['tenant-verify-token-77', VERIFY_TOKEN]) {
        const res = await handshake(token);
        expect([res.status, res.text], token).to.deep.equal([200, '1158201444']);
      }
      expect((await handshake('tenant-verify-token-78')).status).to.equal(403);
      // Without WHATSAPP_VERIFY_TOKEN the account's token still answers; a wrong one is a 403.
      const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000 }, logger: silentLogger, channels: settings });
      const own = await request(app).get('/webhooks/whatsapp').query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'tenant-verify-token-77', 'hub.challenge': '42' });
      expect([own.status, own.text]).to.deep.equal([200, '42']);
      const wrong = await request(app).get('/webhooks/whatsapp').query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'nope-nope-nope', 'hub.challenge': '42' });
      expect(wrong.status).to.equal(403);
    });
  });

  describe('PUT /channels/whatsapp: keywords, app secret, verify token', () => {
    const put = (key: string, body: Record<string, unknown>) => request(server).put('/api/v1/channels/whatsapp').set('x-api-key', key).send(body);
    const rowOf = async (accountId: string) =>
      (await select<Record<string, unknown>>(testDb(), 'SELECT app_secret_secret, verify_token_hash, opt_out_keywords FROM whatsapp_channels WHERE account_id = ?', [accountId]))[0];

    it('stores the secret encrypted and the token hashed, answers only whether they are set, and null puts the defaults back', async () => {
      const { key, accountId } = await buildTenant();
      const res = await put(key, {
        phoneNumberId: graph.phoneNumberId,
        accessToken: graph.accessToken,
        appSecret: 'account-a-secret-0001',
        verifyToken: 'tenant-verify-token-77',
        optOutKeywords: [' Stop ', 'STOP', 'Désabonner'],
      });
      expect(res.status).to.equal(200);
      expect(res.body.channel).to.deep.include({ appSecret: { configured: true }, verifyToken: { configured: true }, optOutKeywords: ['STOP', 'Désabonner'] });
      expect(JSON.stringify(res.body)).not.to.contain('account-a-secret');
      expect(JSON.stringify(res.body)).not.to.contain('tenant-verify');
      const row = await rowOf(accountId);
      expect(String(row!.app_secret_secret)).to.match(/^v1\./);
      expect(JSON.stringify(row)).not.to.contain('account-a-secret');
      expect(String(row!.verify_token_hash)).to.match(/^[0-9a-f]{64}$/);
      // Left out: kept.
      const kept = await put(key, { phoneNumberId: graph.phoneNumberId });
      expect(kept.body.channel).to.deep.include({ appSecret: { configured: true }, verifyToken: { configured: true }, optOutKeywords: ['STOP', 'Désabonner'] });
      // Null: back to the server's.
      const cleared = await put(key, { phoneNumberId: graph.phoneNumberId, appSecret: null, verifyToken: null, optOutKeywords: null });
      expect(cleared.body.channel).to.deep.include({
        appSecret: { configured: false },
        verifyToken: { configured: false },
        optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'],
      });
      expect(await rowOf(accountId)).to.deep.equal({ app_secret_secret: null, verify_token_hash: null, opt_out_keywords: null });
    });

    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['an empty keyword list', { optOutKeywords: [] }, 'optOutKeywords'],
      ['a keyword of punctuation only', { optOutKeywords: ['STOP', '!!!'] }, 'optOutKeywords.1'],
      ['a keyword over 64 characters', { optOutKeywords: ['x'.repeat(65)] }, 'optOutKeywords.0'],
      ['more than 50 keywords', { optOutKeywords: Array.from({ length: 51 }, (_, i) => `stop${i}`) }, 'optOutKeywords'],
      ['keywords that are not a list', { optOutKeywords: 'STOP' }, 'optOutKeywords'],
      ['a short app secret', { appSecret: 'short' }, 'appSecret'],
      ['an app secret with spaces', { appSecret: 'two words long enough' }, 'appSecret'],
      ['a verify token with spaces', { verifyToken: 'verify token here' }, 'verifyToken'],
      ['a verify token that is not text', { verifyToken: 12345678 }, 'verifyToken'],
    ];
    for (const [what, body, field] of refusals) {
      it(`answers 400 naming ${field} for ${what}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        await put(key, { phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken });
        const before = await rowOf(accountId);
        const res = await put(key, { phoneNumberId: graph.phoneNumberId, ...body });
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details.map((d: { path: string }) => d.path)).to.include(field);
        expect(await rowOf(accountId)).to.deep.equal(before);
      });
    }

    it('answers 409 secrets_key_missing for an app secret or verify token without a secrets key, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000 }, logger: silentLogger, channels: channelSettings({ secrets: null }) });
      for (const body of [{ appSecret: 'account-a-secret-0001' }, { verifyToken: 'tenant-verify-token-77' }]) {
        const res = await request(app).put('/api/v1/channels/whatsapp').set('x-api-key', key).send({ phoneNumberId: '1065', ...body });
        expect([res.status, res.body.code]).to.deep.equal([409, 'secrets_key_missing']);
      }
      expect(await rowOf(accountId)).to.equal(undefined);
    });
  });
});
