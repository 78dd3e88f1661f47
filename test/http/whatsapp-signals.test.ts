import { expect } from 'chai';
import type { Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { putWhatsAppChannel } from '../../src/services/channels/whatsapp-channel';
import { silentLogger } from '../support/app';
import { channelSettings } from '../support/channels';
import { testDb } from '../support/db';
import { buildContact } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';
import { inboundWebhookPayload, startGraphStandIn, statusWebhookPayload, type GraphStandIn } from '../support/whatsapp-graph';
import { engineAt, enrolledRun } from '../services/engine/support';

// WhatsApp's engagement signals (docs/activities.md "Engagement signals"): a WhatsApp step sent
// by the engine to the Graph stand-in, then Meta's signed posts (statuses and inbound messages)
// sent by the stand-in to /webhooks/whatsapp on loopback; the contact's activities read back
// through the API.

const APP_SECRET = 'meta-app-secret-0123456789abcdef';
const TEMPLATE = { name: 'welcome', language: { code: 'en_US' }, components: [] };
const PHONE = '4915112345678';

// Every statement naming the activities table fails while fn runs, as a lost connection would.
async function withFailingActivities<T>(fn: () => Promise<T>): Promise<T> {
  const { sequelize } = testDb();
  const original = sequelize.query;
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
    const [sql] = args;
    const text = typeof sql === 'string' ? sql : ((sql as { query?: string }).query ?? '');
    if (/\bactivities\b/i.test(text)) return Promise.reject(new Error('connection lost'));
    return original.apply(this, args);
  } as typeof original;
  try {
    return await fn();
  } finally {
    sequelize.query = original;
  }
}

describe('WhatsApp engagement signals (whatsapp.read, whatsapp.replied)', function () {
  this.timeout(20_000);
  let graph: GraphStandIn;
  let server: Server;
  let base: string;
  const settings = channelSettings();

  beforeEach(async () => {
    graph = await startGraphStandIn();
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000, whatsappWebhook: { appSecret: APP_SECRET } },
      logger: silentLogger,
      channels: { ...settings, whatsappApiUrl: graph.apiUrl },
    });
    ({ server, base } = await listenOnLoopback(app));
  });
  afterEach(async () => {
    await closeServer(server);
    await graph.close();
  });

  const post = (payload: unknown) => graph.postWebhook(`${base}/webhooks/whatsapp`, payload, APP_SECRET);

  // A run whose WhatsApp step was sent to the stand-in: its message and Graph's id of it.
  async function sentWhatsApp() {
    const withGraph = { ...settings, whatsappApiUrl: graph.apiUrl };
    const run = await enrolledRun([{ id: 'chat', type: 'whatsapp', template: TEMPLATE }], {}, { phone: `+${PHONE}` });
    await putWhatsAppChannel(testDb(), { accountId: run.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, withGraph);
    const { engine } = engineAt(Date.now() + 1, { messages: { settings: withGraph, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    try {
      await engine.runUntilIdle();
    } finally {
      await engine.stop(50);
    }
    const [message] = await select<{ id: string; provider_message_id: string; message_key: string }>(
      testDb(),
      'SELECT id, provider_message_id, message_key FROM messages WHERE run_id = ?',
      [run.runId],
    );
    expect(message!.provider_message_id).to.be.a('string');
    const activities = async (contactId = run.contact.id) => {
      const res = await request(server).get(`/api/v1/contacts/${contactId}/activities`).set('x-api-key', run.key);
      expect(res.status).to.equal(200);
      return res.body.activities as Array<{ id: string; name: string; properties: Record<string, unknown>; occurredAt: string }>;
    };
    return { run, message: message!, activities };
  }

  it('records whatsapp.read once for a read status, however often Meta posts it, with the message it is about', async () => {
    const { run, message, activities } = await sentWhatsApp();
    const wamid = message.provider_message_id;
    const read = statusWebhookPayload([{ id: wamid, status: 'read', timestamp: Math.floor(Date.now() / 1000) - 60 }], graph.phoneNumberId);
    for (let i = 0; i < 3; i += 1) expect((await post(read)).status).to.equal(200);
    // A delivered after it, and a read of a message that is not ours: nothing more.
    await post(statusWebhookPayload([{ id: wamid, status: 'delivered' }, { id: 'wamid.NOT-OURS', status: 'read' }], graph.phoneNumberId));
    const list = await activities();
    expect(list).to.have.length(1);
    expect(list[0]).to.deep.include({ id: `whatsapp.read:${wamid}`, name: 'whatsapp.read' });
    expect(list[0]!.properties).to.deep.equal({ messageId: message.id, sequenceId: run.sequence.id, stepId: 'chat', runId: run.runId, providerMessageId: wamid });
    // When Meta says it was read, not when the post came.
    expect(Date.parse(list[0]!.occurredAt)).to.be.below(Date.now() - 50_000);
  });

  it('records a read Meta posts again after the first post failed to record it', async () => {
    const { message, activities } = await sentWhatsApp();
    const read = statusWebhookPayload([{ id: message.provider_message_id, status: 'read' }], graph.phoneNumberId);
    // The status commits; the activity's statements fail: the post answers 500, and Meta retries.
    const failed = await withFailingActivities(() => post(read));
    expect(failed.status).to.not.equal(200);
    const [stored] = await select<{ status: string }>(testDb(), 'SELECT status FROM messages WHERE id = ?', [message.id]);
    expect(stored!.status).to.equal('read');
    expect(await activities()).to.deep.equal([]);
    expect((await post(read)).status).to.equal(200);
    expect((await activities()).map((a) => a.name)).to.deep.equal(['whatsapp.read']);
  });

  it('records whatsapp.replied once for an inbound message, with its text and the message it answers; a STOP is an opt-out, not a reply', async () => {
    const { run, message, activities } = await sentWhatsApp();
    const reply = inboundWebhookPayload([{ type: 'text', from: PHONE, id: 'wamid.REPLY0001', body: 'Yes please, the blue one' }], graph.phoneNumberId);
    for (let i = 0; i < 2; i += 1) expect((await post(reply)).status).to.equal(200);
    await post(inboundWebhookPayload([{ type: 'text', from: PHONE, id: 'wamid.STOP0001', body: 'STOP' }], graph.phoneNumberId));
    const list = await activities();
    expect(list.map((a) => a.id)).to.deep.equal(['whatsapp.replied:wamid.REPLY0001']);
    expect(list[0]!.name).to.equal('whatsapp.replied');
    expect(list[0]!.properties).to.deep.equal({
      providerMessageId: 'wamid.REPLY0001',
      from: `+${PHONE}`,
      type: 'text',
      text: 'Yes please, the blue one',
      payload: null,
      messageId: message.id,
      sequenceId: run.sequence.id,
      stepId: 'chat',
      runId: run.runId,
      repliedTo: 'latest',
    });
    // A reply that quotes our message names it as quoted.
    const quoting = inboundWebhookPayload([{ type: 'text', from: PHONE, id: 'wamid.REPLY0002', body: 'This one' }], graph.phoneNumberId) as {
      entry: Array<{ changes: Array<{ value: { messages: Array<Record<string, unknown>> } }> }>;
    };
    quoting.entry[0]!.changes[0]!.value.messages[0]!.context = { from: '15550783881', id: message.provider_message_id };
    await post(quoting);
    const quoted = (await activities()).find((a) => a.id === 'whatsapp.replied:wamid.REPLY0002')!;
    expect(quoted.properties).to.deep.include({ messageId: message.id, repliedTo: 'quoted' });
    // The opt-out kept its own handling.
    const [contact] = await select<{ whatsapp_subscription_status: string }>(testDb(), 'SELECT whatsapp_subscription_status FROM contacts WHERE id = ?', [run.contact.id]);
    expect(contact!.whatsapp_subscription_status).to.equal('unsubscribed');
  });

  it('bounds a reply\'s text, and records one reply per contact when two contacts share the number', async () => {
    const { run, activities } = await sentWhatsApp();
    const twin = await buildContact(run.accountId, { phone: `+${PHONE}` });
    await post(inboundWebhookPayload([{ type: 'text', from: PHONE, id: 'wamid.LONG0001', body: 'x'.repeat(3000) }], graph.phoneNumberId));
    const mine = await activities();
    expect(mine.map((a) => a.id)).to.deep.equal([`whatsapp.replied:wamid.LONG0001:${run.contact.id}`]);
    expect((mine[0]!.properties.text as string).length).to.equal(1024);
    expect((await activities(twin.id)).map((a) => a.id)).to.deep.equal([`whatsapp.replied:wamid.LONG0001:${twin.id}`]);
    // The twin was sent nothing: no message it answers.
    expect((await activities(twin.id))[0]!.properties).not.to.have.property('messageId');
  });
});
