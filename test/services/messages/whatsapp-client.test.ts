import { expect } from 'chai';
import { sendWhatsAppMessage, whatsappTemplateRequest, type WhatsAppResult, type WhatsAppSender } from '../../../src/services/messages/whatsapp-client';
import { startGraphStandIn, type GraphStandIn } from '../../support/whatsapp-graph';

// The Graph client against a stand-in of the messages endpoint on loopback
// (test/support/whatsapp-graph.ts). No database: it runs on every Node the service starts on
// (on Node 24 with TEST_DATABASE_URL naming MariaDB, as the root hooks open a database).

const template = { name: 'welcome', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }] };
const request = (key = 'msg_run_step_1') => whatsappTemplateRequest('4915112345678', template, key);

describe('the WhatsApp Graph client (whatsapp-client.ts) against a stand-in', () => {
  let graph: GraphStandIn;
  let sender: WhatsAppSender;

  beforeEach(async () => {
    graph = await startGraphStandIn();
    sender = { apiUrl: graph.apiUrl, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken };
  });
  afterEach(() => graph.close());

  const send = (options: { timeoutMs?: number; signal?: AbortSignal; sender?: WhatsAppSender; key?: string } = {}) =>
    sendWhatsAppMessage(options.sender ?? sender, request(options.key), { timeoutMs: options.timeoutMs ?? 2_000, signal: options.signal });

  it('sends the documented template request with the bearer token and answers the message id', async () => {
    const result = await send({ key: 'msg_r1_welcome_1' });
    expect(result).to.include({ ok: true, providerMessageId: 'wamid.HBgL000001', status: 200 });
    expect(graph.requests).to.have.length(1);
    const [seen] = graph.requests;
    expect(seen!.path).to.equal(`/v21.0/${graph.phoneNumberId}/messages`);
    expect(seen!.headers.authorization).to.equal(`Bearer ${graph.accessToken}`);
    expect(seen!.headers['content-type']).to.equal('application/json');
    expect(seen!.json).to.deep.equal({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '4915112345678',
      type: 'template',
      template,
      biz_opaque_callback_data: 'msg_r1_welcome_1',
    });
  });

  it('fails for good with Graph\'s code on a wrong token (the stand-in checks it)', async () => {
    const result = await send({ sender: { ...sender, accessToken: 'wrong' } });
    expect(result).to.deep.include({ ok: false, retryable: false, abandoned: false, status: 401, code: 190 });
    expect((result as Extract<WhatsAppResult, { ok: false }>).error).to.match(/^190: Invalid OAuth access token/);
  });

  it('fails for good on a request shape Graph refuses, with the code and details', async () => {
    const result = await sendWhatsAppMessage(sender, { ...request(), to: '+49 151 1234' }, { timeoutMs: 2_000 });
    expect(result).to.deep.include({ ok: false, retryable: false, status: 400, code: 100 });
    expect((result as Extract<WhatsAppResult, { ok: false }>).error).to.equal('100: Invalid parameter (to must be a phone number in E.164 digits)');
  });

  it('answers 429 with code 130429 as retryable', async () => {
    graph.rateLimited();
    const result = await send();
    expect(result).to.deep.include({ ok: false, retryable: true, status: 429, code: 130429 });
    expect((result as Extract<WhatsAppResult, { ok: false }>).error).to.match(/^130429: \(#130429\) Rate limit hit/);
  });

  it('treats code 130429 as retryable whatever the status', async () => {
    graph.refuse(400, 130429, 'Rate limit hit');
    expect(await send()).to.deep.include({ ok: false, retryable: true, code: 130429 });
  });

  it('answers a 5xx as retryable, with or without a Graph error body', async () => {
    graph.serverError(503);
    expect(await send()).to.deep.include({ ok: false, retryable: true, status: 503, code: 131000 });
    graph.answer({ kind: 'raw', status: 502, body: '<html>Bad gateway</html>' });
    expect(await send()).to.deep.include({ ok: false, retryable: true, status: 502, code: null, error: 'http 502' });
  });

  it('answers another 4xx as final, with its code and subcode', async () => {
    graph.refuse(400, 132001, 'Template name does not exist in the translation', 2494073);
    const result = await send();
    expect(result).to.deep.include({ ok: false, retryable: false, status: 400, code: 132001, subcode: 2494073 });
    expect((result as Extract<WhatsAppResult, { ok: false }>).error).to.equal('132001: Template name does not exist in the translation');
  });

  it('takes a 2xx without a message id as sent, with no provider id (sending again would send twice)', async () => {
    graph.answer({ kind: 'raw', status: 200, body: 'not json' });
    expect(await send()).to.deep.include({ ok: true, providerMessageId: null, status: 200 });
  });

  it('gives up on a stand-in that never answers after the bound, closing its socket', async () => {
    graph.hang();
    const started = performance.now();
    const result = await send({ timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(result).to.deep.include({ ok: false, retryable: true, abandoned: false, status: null, error: 'timeout after 300 ms' });
    expect(elapsed).to.be.within(250, 2_000);
    // The socket is destroyed, not left to the keep-alive pool.
    for (let i = 0; i < 50 && graph.openSockets() > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(graph.openSockets()).to.equal(0);
  });

  it('stops at once when its signal aborts: abandoned, not a failure of the receiver', async () => {
    graph.hang();
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const started = performance.now();
    const result = await send({ timeoutMs: 10_000, signal: stop.signal });
    expect(performance.now() - started).to.be.below(2_000);
    expect(result).to.deep.include({ ok: false, retryable: false, abandoned: true, status: null });
  });

  it('is retryable when nothing listens', async () => {
    const address = graph.apiUrl;
    await graph.close();
    const result = await send({ sender: { ...sender, apiUrl: address } });
    expect(result).to.deep.include({ ok: false, retryable: true, status: null });
    expect((result as Extract<WhatsAppResult, { ok: false }>).error).to.match(/^ECONNREFUSED/);
    graph = await startGraphStandIn();
  });
});
