import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { signTrackingToken } from '../../src/services/signals/tracking-token';
import { appWithChannels, channelSettings } from '../support/channels';
import { testDb } from '../support/db';
import { startSmtpServer } from '../support/smtp-server';
import { engineAt, enrolledRun } from '../services/engine/support';

// Open pixels and tracked links end to end: an email step sent by the engine to a real SMTP
// server, its html read as the recipient's client reads it, then the pixel and the links loaded
// over HTTP from the app, and the contact's activities read back through the API.

const HTML =
  '<html><body><p>Hi {{ contact.firstName }}</p>' +
  '<a href="https://shop.example/cart?x=1&amp;y=2">Your cart</a> <a class="b" href="https://shop.example/cart?x=1&amp;y=2">again</a> ' +
  "<a href='http://shop.example/b'>B</a> <a href=\"mailto:help@shop.example\">Write to us</a> <a href=\"#top\">Top</a> " +
  '<a href="{{ unsubscribe_url }}">Unsubscribe</a></body></html>';

const PIXEL = /<img src="https:\/\/svc\.example\.com\/t\/o\/([A-Za-z0-9_-]{70})" width="1" height="1"/;
const CLICK = /href="https:\/\/svc\.example\.com\/t\/c\/([A-Za-z0-9_-]{70})"/g;

describe('email open and click tracking (/t/o, /t/c)', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  // One email sent with the account's tracking and the step's trackClicks as given.
  async function sent(options: { opens: boolean; clicks: boolean; trackClicks?: boolean }) {
    const server = await startSmtpServer();
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>' });
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    cleanups.push(() => server.close(), () => engine.stop(50));
    const app = appWithChannels(settings);
    const step = { id: 'mail', type: 'email', subject: 'Hi', html: HTML, ...(options.trackClicks === undefined ? {} : { trackClicks: options.trackClicks }) };
    const run = await enrolledRun([step], {}, { firstName: 'Ada' });
    const put = await request(app)
      .put('/api/v1/channels/email')
      .set('x-api-key', run.key)
      .send({ from: 'shop@example.com', smtpUrl: server.url, tracking: { opens: options.opens, clicks: options.clicks } });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const mail = server.received[0]!;
    const html = typeof mail.parsed.html === 'string' ? mail.parsed.html : '';
    const [message] = await select<{ id: string; content: string }>(testDb(), 'SELECT id, content FROM messages WHERE run_id = ?', [run.runId]);
    const activities = async () => {
      const res = await request(app).get(`/api/v1/contacts/${run.contact.id}/activities`).set('x-api-key', run.key);
      expect(res.status).to.equal(200);
      return res.body.activities as Array<{ id: string; name: string; properties: Record<string, unknown> }>;
    };
    const pixel = PIXEL.exec(html)?.[1];
    const links = [...html.matchAll(CLICK)].map((match) => match[1]!);
    return { app, settings, run, html, mail, message: message!, activities, pixel, links };
  }

  it('puts a pixel and tracked links in the html; the unsubscribe link, mailto and anchors are left, and the text part keeps its links', async () => {
    const { html, mail, message, pixel, links, run } = await sent({ opens: true, clicks: true, trackClicks: true });
    expect(pixel).to.be.a('string');
    // Before </body>, as the last thing the client renders.
    expect(html).to.match(/style="display:block;width:1px;height:1px;border:0" \/><\/body>/);
    // Three hrefs to two distinct targets: the same URL twice is one link.
    expect(links).to.have.length(3);
    expect(links[0]).to.equal(links[1]);
    expect(links[2]).not.to.equal(links[0]);
    expect(html).to.contain('<a class="b" href="https://svc.example.com/t/c/');
    expect(html).not.to.contain('shop.example/cart');
    expect(html).to.contain('href="mailto:help@shop.example"');
    expect(html).to.contain('href="#top"');
    expect(html).to.match(/href="https:\/\/svc\.example\.com\/u\/[A-Za-z0-9_-]{67}"/);
    expect(mail.parsed.text).to.contain('https://shop.example/cart?x=1&y=2');
    expect(mail.parsed.text).not.to.contain('/t/c/');
    // The targets the redirect reads, as the browser would have followed them.
    expect(JSON.parse(message.content).links).to.deep.equal(['https://shop.example/cart?x=1&y=2', 'http://shop.example/b']);
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('answers the pixel with a GIF that is never cached, and records email.opened once however often it loads', async () => {
    const { app, pixel, activities, message, run } = await sent({ opens: true, clicks: false });
    for (let i = 0; i < 3; i += 1) {
      const res = await request(app).get(`/t/o/${pixel}`).set('user-agent', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Thunderbird/128.0');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('image/gif');
      expect(res.headers['cache-control']).to.equal('no-store, private');
      expect(res.headers['referrer-policy']).to.equal('no-referrer');
      expect(Buffer.from(res.body).subarray(0, 6).toString('latin1')).to.equal('GIF89a');
    }
    const list = await activities();
    expect(list).to.have.length(1);
    expect(list[0]).to.deep.include({ id: `email.opened:${message.id}`, name: 'email.opened' });
    expect(list[0]!.properties).to.deep.equal({ messageId: message.id, sequenceId: run.sequence.id, stepId: 'mail', runId: run.runId, prefetched: false });
  });

  it('flags a load by Apple Mail Privacy Protection as prefetched; the reader\'s own load after it records nothing more', async () => {
    const { app, pixel, activities } = await sent({ opens: true, clicks: false });
    await request(app).get(`/t/o/${pixel}`).set('user-agent', 'Mozilla/5.0').expect(200);
    await request(app).get(`/t/o/${pixel}`).set('user-agent', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15').expect(200);
    const list = await activities();
    expect(list).to.have.length(1);
    expect(list[0]!.properties).to.deep.include({ prefetched: true, proxy: 'apple' });
  });

  it('flags a load through Gmail\'s image proxy as prefetched, with proxy google', async () => {
    const { app, pixel, activities } = await sent({ opens: true, clicks: false });
    await request(app).get(`/t/o/${pixel}`).set('user-agent', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)').expect(200);
    expect((await activities())[0]!.properties).to.deep.include({ prefetched: true, proxy: 'google' });
  });

  it('redirects a click to the link as sent and records email.clicked once per link, with its url', async () => {
    const { app, links, activities, message, run } = await sent({ opens: false, clicks: true, trackClicks: true });
    const first = await request(app).get(`/t/c/${links[0]}`);
    expect(first.status).to.equal(302);
    expect(first.headers.location).to.equal('https://shop.example/cart?x=1&y=2');
    expect(first.headers['cache-control']).to.equal('no-store, private');
    expect(first.headers['referrer-policy']).to.equal('no-referrer');
    // The other href to the same target, and the first again: the same link.
    await request(app).get(`/t/c/${links[1]}`).expect(302);
    await request(app).get(`/t/c/${links[0]}`).expect(302);
    const other = await request(app).get(`/t/c/${links[2]}`);
    expect(other.headers.location).to.equal('http://shop.example/b');
    const list = await activities();
    expect(list.map((a) => a.id).sort()).to.deep.equal([`email.clicked:${message.id}:0`, `email.clicked:${message.id}:1`]);
    const cart = list.find((a) => a.id.endsWith(':0'))!;
    expect(cart.properties).to.deep.equal({ messageId: message.id, sequenceId: run.sequence.id, stepId: 'mail', runId: run.runId, url: 'https://shop.example/cart?x=1&y=2', link: 0 });
  });

  it('refuses a token it did not sign, an altered one, one of the other kind, and a link the message does not have: 404 and no redirect', async () => {
    const { app, settings, links, pixel, message, run, activities } = await sent({ opens: true, clicks: true, trackClicks: true });
    const flip = (token: string) => `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    const foreignKey = signTrackingToken(randomBytes(32), { kind: 'click', accountId: run.accountId, messageId: message.id, link: 0 });
    // Signed with our key, but naming a link index the message never had: not a target of it.
    const noSuchLink = signTrackingToken(settings.secrets!.tracking, { kind: 'click', accountId: run.accountId, messageId: message.id, link: 7 });
    // Our key, another account: the message is not that account's.
    const otherAccount = signTrackingToken(settings.secrets!.tracking, { kind: 'click', accountId: '00000000-0000-4000-8000-000000000000', messageId: message.id, link: 0 });
    for (const token of [flip(links[0]!), foreignKey, noSuchLink, otherAccount, pixel!, 'not-a-token', `${links[0]}A`]) {
      const res = await request(app).get(`/t/c/${token}`);
      expect(res.status, token).to.equal(404);
      expect(res.headers.location, token).to.equal(undefined);
    }
    for (const token of [flip(pixel!), links[0]!, signTrackingToken(randomBytes(32), { kind: 'open', accountId: run.accountId, messageId: message.id, link: 0 })]) {
      expect((await request(app).get(`/t/o/${token}`)).status, token).to.equal(404);
    }
    // A target in the query is never read: the redirect goes where the message's link went.
    const withQuery = await request(app).get(`/t/c/${links[2]}?url=https://evil.example/`);
    expect(withQuery.headers.location).to.equal('http://shop.example/b');
    expect((await activities()).map((a) => a.name)).to.deep.equal(['email.clicked']);
  });

  it('answers HEAD requests (link scanners) without recording anything', async () => {
    const { app, links, pixel, activities } = await sent({ opens: true, clicks: true, trackClicks: true });
    expect((await request(app).head(`/t/c/${links[0]}`)).status).to.equal(302);
    expect((await request(app).head(`/t/o/${pixel}`)).status).to.equal(200);
    expect(await activities()).to.deep.equal([]);
  });

  it('rewrites no link of a step that does not ask for it, and adds no pixel for an account with opens off', async () => {
    const noStep = await sent({ opens: true, clicks: true });
    expect(noStep.pixel).to.be.a('string');
    expect(noStep.links).to.deep.equal([]);
    expect(noStep.html).to.contain('href="https://shop.example/cart?x=1&amp;y=2"');
    expect(JSON.parse(noStep.message.content)).not.to.have.property('links');
    const off = await sent({ opens: false, clicks: false, trackClicks: true });
    expect(off.pixel).to.equal(undefined);
    expect(off.links).to.deep.equal([]);
    expect(off.html).not.to.contain('/t/');
  });

  it('keeps answering an email sent with tracking once the account turns it off, and records nothing from then on', async () => {
    const { app, run, pixel, links, activities } = await sent({ opens: true, clicks: true, trackClicks: true });
    await request(app).put('/api/v1/channels/email').set('x-api-key', run.key).send({ from: 'shop@example.com', tracking: { opens: false, clicks: false } }).expect(200);
    expect((await request(app).get(`/t/o/${pixel}`)).status).to.equal(200);
    expect((await request(app).get(`/t/c/${links[0]}`)).headers.location).to.equal('https://shop.example/cart?x=1&y=2');
    expect(await activities()).to.deep.equal([]);
  });
});
