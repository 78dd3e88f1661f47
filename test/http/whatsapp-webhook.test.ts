import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { transactionCounts, withTransaction } from '../../src/db/sql/transaction';
import { createMetrics, type Metrics } from '../../src/metrics/metrics';
import { markSending, markSent } from '../../src/services/messages/message-store';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { messageFixture, storedMessage } from '../support/messages';
import { parseExposition, valueOf } from '../support/prometheus-text';
import { metaSignature, statusWebhookPayload, type StatusReport } from '../support/whatsapp-graph';
import { allEvents } from '../services/events/support';

// /webhooks/whatsapp: Meta's handshake, and its signed status posts applied forward only.

const APP_SECRET = 'meta-app-secret-0123456789abcdef';
const VERIFY_TOKEN = 'verify-token-abcdef';
const METRICS_TOKEN = 'metrics-token-0123456789';

function webhookApp(settings: { appSecret?: string; verifyToken?: string } = { appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN }, metrics?: Metrics): Express {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 1_000_000, whatsappWebhook: settings, metricsToken: METRICS_TOKEN },
    logger: silentLogger,
    metrics,
  });
}

function post(app: Express, body: string, signature: string | null = metaSignature(body, APP_SECRET)) {
  const req = request(app).post('/webhooks/whatsapp').set('content-type', 'application/json');
  return (signature === null ? req : req.set('x-hub-signature-256', signature)).send(body);
}

const statuses = (reports: StatusReport[]) => JSON.stringify(statusWebhookPayload(reports));
const messageEvents = async (accountId: string) => (await allEvents(accountId)).filter((e) => e.type.startsWith('message.'));

async function sentMessage(providerMessageId: string) {
  const fixture = await messageFixture();
  const message = await fixture.queue();
  await withTransaction(testDb(), async (transaction) => {
    await markSending(testDb(), [{ id: message.id, content: {} }], { now: new Date() }, transaction);
    await markSent(testDb(), [{ id: message.id, providerMessageId }], { now: new Date() }, transaction);
  });
  return { ...fixture, message };
}

describe('GET /webhooks/whatsapp (Meta\'s subscription handshake)', () => {
  const handshake = (app: Express, query: Record<string, string>) => request(app).get('/webhooks/whatsapp').query(query);

  it('answers the challenge as text when the verify token matches', async () => {
    const res = await handshake(webhookApp(), { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    expect(res.text).to.equal('1158201444');
  });

  it('is a 403 for a wrong token or mode, and a 400 without a challenge', async () => {
    // A challenge no request id can contain by chance: the refusal must not echo it.
    const wrongToken = await handshake(webhookApp(), { 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-token-abcdeF', 'hub.challenge': 'challenge-echo-probe' });
    expect([wrongToken.status, wrongToken.body.code]).to.deep.equal([403, 'forbidden']);
    expect(wrongToken.text).to.not.include('challenge-echo-probe');
    const wrongMode = await handshake(webhookApp(), { 'hub.mode': 'unsubscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' });
    expect(wrongMode.status).to.equal(403);
    const none = await handshake(webhookApp(), {});
    expect(none.status).to.equal(403);
    const noChallenge = await handshake(webhookApp(), { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN });
    expect([noChallenge.status, noChallenge.body.code]).to.deep.equal([400, 'validation_failed']);
  });

  it('is a 404 when no verify token is configured', async () => {
    const res = await handshake(webhookApp({ appSecret: APP_SECRET }), { 'hub.mode': 'subscribe', 'hub.verify_token': 'anything-at-all', 'hub.challenge': '1' });
    expect([res.status, res.body.code]).to.deep.equal([404, 'not_found']);
    expect(res.body.error).to.include('WHATSAPP_VERIFY_TOKEN');
  });
});

describe('POST /webhooks/whatsapp (message statuses)', () => {
  it('applies signed statuses: delivered then read, with their events', async () => {
    const { message, accountId, contact } = await sentMessage('wamid.D1');
    const app = webhookApp();
    const delivered = await post(app, statuses([{ id: 'wamid.D1', status: 'delivered', timestamp: 1795430400 }]));
    expect(delivered.status).to.equal(200);
    expect(delivered.body).to.deep.equal({ received: 1, applied: 1, unknown: 0 });
    const read = await post(app, statuses([{ id: 'wamid.D1', status: 'read', timestamp: 1795430460 }]));
    expect(read.body).to.deep.equal({ received: 1, applied: 1, unknown: 0 });
    const stored = await storedMessage(message.id);
    expect(stored.status).to.equal('read');
    const events = await messageEvents(accountId);
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    expect((events[2]!.data as { message: Record<string, unknown> }).message).to.include({
      id: message.id,
      status: 'read',
      contactId: contact.id,
      deliveredAt: '2026-11-23T10:40:00.000Z',
      readAt: '2026-11-23T10:41:00.000Z',
    });
  });

  it('keeps read when a late delivered or sent arrives, and records no event for them', async () => {
    const { message, accountId } = await sentMessage('wamid.O1');
    const app = webhookApp();
    await post(app, statuses([{ id: 'wamid.O1', status: 'read' }]));
    const late = await post(app, statuses([{ id: 'wamid.O1', status: 'delivered' }, { id: 'wamid.O1', status: 'sent' }]));
    expect(late.body).to.deep.equal({ received: 2, applied: 0, unknown: 0 });
    expect((await storedMessage(message.id)).status).to.equal('read');
    expect((await messageEvents(accountId)).map((e) => e.type)).to.deep.equal(['message.sent', 'message.read']);
  });

  it('stores a failure with its code and text, and records message.failed', async () => {
    const { message, accountId } = await sentMessage('wamid.X1');
    const body = statuses([
      { id: 'wamid.X1', status: 'failed', errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Receiver is incapable of receiving this message' } }] },
    ]);
    expect((await post(webhookApp(), body)).status).to.equal(200);
    const stored = await storedMessage(message.id);
    expect([stored.status, stored.error]).to.deep.equal(['failed', '131026: Message undeliverable (Receiver is incapable of receiving this message)']);
    const [failed] = (await messageEvents(accountId)).filter((e) => e.type === 'message.failed');
    expect((failed!.data as { message: { error: string } }).message.error).to.match(/^131026: /);
  });

  it('ignores unknown ids with a 200, and applies the known ones of the same post', async () => {
    const { message } = await sentMessage('wamid.K1');
    const res = await post(webhookApp(), statuses([{ id: 'wamid.SOMEONE-ELSE', status: 'read' }, { id: 'wamid.K1', status: 'delivered' }]));
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ received: 2, applied: 1, unknown: 1 });
    expect((await storedMessage(message.id)).status).to.equal('delivered');
  });

  it('answers 200 to what carries no statuses (incoming messages, other fields)', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: { messages: [{ from: '4915112345678', type: 'text' }] } }] }] });
    const res = await post(webhookApp(), body);
    expect([res.status, res.body.received]).to.deep.equal([200, 0]);
  });

  it('is a 401 for a missing, wrong or stale signature, and writes nothing', async () => {
    const { message, accountId } = await sentMessage('wamid.S1');
    const app = webhookApp();
    const body = statuses([{ id: 'wamid.S1', status: 'read' }]);
    const other = statuses([{ id: 'wamid.S1', status: 'delivered' }]);
    for (const signature of [null, 'sha256=00', metaSignature(body, 'another-secret'), metaSignature(other, APP_SECRET), metaSignature(body, APP_SECRET).replace('sha256=', 'sha1=')]) {
      const res = await post(app, body, signature);
      expect([res.status, res.body.code], String(signature)).to.deep.equal([401, 'invalid_signature']);
    }
    expect((await storedMessage(message.id)).status).to.equal('sent');
    expect((await messageEvents(accountId)).map((e) => e.type)).to.deep.equal(['message.sent']);
  });

  it('checks the signature over the bytes as sent (spacing and escapes kept), not over re-encoded JSON', async () => {
    const { message } = await sentMessage('wamid.B1');
    const body = `{ "object" : "whatsapp_business_account",\n "entry": ${JSON.stringify(statusWebhookPayload([{ id: 'wamid.B1', status: 'delivered' }]).entry)} , "note": "caf\\u00e9" }`;
    expect((await post(webhookApp(), body)).status).to.equal(200);
    expect((await storedMessage(message.id)).status).to.equal('delivered');
  });

  it('is a 400 for a signed body that is not JSON', async () => {
    const res = await post(webhookApp(), '{"entry": [');
    expect([res.status, res.body.code]).to.deep.equal([400, 'malformed_json']);
  });

  it('is a 404 that writes nothing when no app secret is configured', async () => {
    const { message } = await sentMessage('wamid.N1');
    const body = statuses([{ id: 'wamid.N1', status: 'read' }]);
    const res = await post(webhookApp({ verifyToken: VERIFY_TOKEN }), body);
    expect([res.status, res.body.code]).to.deep.equal([404, 'not_found']);
    expect((await storedMessage(message.id)).status).to.equal('sent');
  });

  it('needs no API key, and leaves the API\'s JSON bodies as they were', async () => {
    const app = webhookApp();
    expect((await post(app, statuses([]))).status).to.equal(200);
    const api = await request(app).post('/api/v1/contacts').set('content-type', 'application/json').send('{"email": "x@example.com"}');
    expect([api.status, api.body.code]).to.deep.equal([401, 'missing_api_key']);
  });

  it('ends every message at read, with one read event each, under concurrent posts in any order', async function () {
    this.timeout(60_000);
    const fixture = await messageFixture();
    const ids: Record<string, string> = {};
    for (let i = 0; i < 4; i += 1) {
      const message = await fixture.queue();
      await withTransaction(testDb(), (transaction) => markSent(testDb(), [{ id: message.id, providerMessageId: `wamid.C${i}` }], { now: new Date() }, transaction));
      ids[`wamid.C${i}`] = message.id;
    }
    const app = webhookApp();
    // Each post names every message once, with a status of its own; 12 posts at once.
    const order: StatusReport['status'][] = ['delivered', 'read', 'sent', 'delivered', 'read', 'delivered'];
    const posts = Array.from({ length: 12 }, (_, p) =>
      statuses(Object.keys(ids).map((id, i) => ({ id, status: order[(p + i) % order.length]! }))),
    ).sort(() => Math.random() - 0.5);
    const deadlocks = transactionCounts(testDb()).deadlocks;
    const answers = await Promise.all(posts.map((body) => post(app, body)));
    // The messages are locked in id order: the posts queue, none deadlocks.
    expect(transactionCounts(testDb()).deadlocks).to.equal(deadlocks);
    expect(answers.map((res) => res.status)).to.deep.equal(posts.map(() => 200));
    for (const id of Object.values(ids)) expect((await storedMessage(id)).status).to.equal('read');
    const events = await messageEvents(fixture.accountId);
    for (const id of Object.values(ids)) {
      const types = events.filter((e) => (e.data as { message: { id: string } }).message.id === id).map((e) => e.type);
      expect(types.filter((t) => t === 'message.read'), id).to.have.length(1);
      expect(types.filter((t) => t === 'message.delivered').length, id).to.be.at.most(1);
      expect(types[types.length - 1]).to.equal('message.read');
    }
  });

  it('counts messages_total by the statuses it applied', async () => {
    await sentMessage('wamid.M1');
    const metrics = createMetrics(testDb());
    const app = webhookApp(undefined, metrics);
    await post(app, statuses([{ id: 'wamid.M1', status: 'delivered' }, { id: 'wamid.M1', status: 'read' }]));
    const scraped = parseExposition((await request(app).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`)).text);
    expect(valueOf(scraped, 'messages_total', { channel: 'whatsapp', outcome: 'delivered' })).to.equal(1);
    expect(valueOf(scraped, 'messages_total', { channel: 'whatsapp', outcome: 'read' })).to.equal(1);
    expect(valueOf(scraped, 'messages_total', { channel: 'email', outcome: 'sent' })).to.equal(0);
    expect(valueOf(scraped, 'message_provider_latency_seconds_count', { channel: 'whatsapp', outcome: 'ok' })).to.equal(undefined);
  });
});
