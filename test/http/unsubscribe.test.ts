import { expect } from 'chai';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { listEvents } from '../../src/services/events/list-events';
import { unsubscribeUrl } from '../../src/services/unsubscribe/unsubscribe-links';
import { caller } from '../support/app';
import { appWithChannels, channelSettings } from '../support/channels';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';

// One-click unsubscribe (RFC 8058, RFC 2369; docs/channels.md "One-click unsubscribe").

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];
const ONE_CLICK = 'List-Unsubscribe=One-Click';

const settings = channelSettings();
let built: ReturnType<typeof appWithChannels> | undefined;
const app = () => (built ??= appWithChannels(settings));

const pathOf = (url: string) => new URL(url).pathname;

async function statuses(contactId: string) {
  const [row] = await select<{ email_subscription_status: string; whatsapp_subscription_status: string; updated_at: unknown }>(
    testDb(),
    'SELECT email_subscription_status, whatsapp_subscription_status, updated_at FROM contacts WHERE id = ?',
    [contactId],
  );
  return row;
}

async function events(accountId: string) {
  return (await listEvents(testDb(), { accountId, limit: 100 })).events;
}

async function setup() {
  const tenant = await buildTenant();
  const contact = await buildContact(tenant.accountId, { firstName: 'Ada' });
  const url = unsubscribeUrl(settings, { accountId: tenant.accountId, contactId: contact.id, channel: 'email' });
  return { ...tenant, contact, url };
}

describe('one-click unsubscribe', () => {
  it('makes a compact link under PUBLIC_BASE_URL', async () => {
    const { url } = await setup();
    expect(url).to.match(/^https:\/\/svc\.example\.com\/u\/[A-Za-z0-9_-]{67}$/);
  });

  it('GET shows a page with a button that posts the one-click body, and changes nothing', async () => {
    const { contact, url, accountId } = await setup();
    const before = await statuses(contact.id);
    const eventsBefore = (await events(accountId)).length;
    const res = await request(app()).get(pathOf(url));
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.headers['referrer-policy']).to.equal('no-referrer');
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(res.text).to.match(/<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe<\/button><\/form>/);
    expect(res.text).not.to.contain(contact.email);
    expect(await statuses(contact.id)).to.deep.equal(before);
    expect((await events(accountId)).length).to.equal(eventsBefore);
  });

  it('POST with the RFC 8058 body, no cookie and no key, unsubscribes the email channel and records contact.updated with its source', async () => {
    const { contact, url, accountId } = await setup();
    const res = await request(app()).post(pathOf(url)).type('form').send(ONE_CLICK);
    expect(res.status).to.equal(200);
    expect(res.text).to.contain('You are unsubscribed');
    const after = await statuses(contact.id);
    expect(after.email_subscription_status).to.equal('unsubscribed');
    expect(after.whatsapp_subscription_status).to.equal('subscribed');
    const recorded = (await events(accountId)).slice(1);
    expect(recorded.map((e) => e.type)).to.deep.equal(['contact.updated', 'contact.subscription_changed']);
    expect(recorded[0].data).to.deep.include({ changedFields: ['emailSubscriptionStatus'], source: 'unsubscribe' });
    expect(recorded[1].data).to.deep.include({ channel: 'email', from: 'subscribed', to: 'unsubscribed', source: 'unsubscribe' });
  });

  it('a repeat answers 200 and changes nothing', async () => {
    const { contact, url, accountId } = await setup();
    await request(app()).post(pathOf(url)).type('form').send(ONE_CLICK).expect(200);
    const once = await statuses(contact.id);
    const eventsOnce = (await events(accountId)).length;
    const again = await request(app()).post(pathOf(url)).type('form').send(ONE_CLICK);
    expect(again.status).to.equal(200);
    expect(await statuses(contact.id)).to.deep.equal(once);
    expect((await events(accountId)).length).to.equal(eventsOnce);
  });

  it('takes the body as multipart/form-data too, and a WhatsApp link unsubscribes WhatsApp only', async () => {
    const { contact, accountId } = await setup();
    const url = unsubscribeUrl(settings, { accountId, contactId: contact.id, channel: 'whatsapp' });
    const res = await request(app()).post(pathOf(url)).field('List-Unsubscribe', 'One-Click');
    expect(res.status).to.equal(200);
    const after = await statuses(contact.id);
    expect(after.whatsapp_subscription_status).to.equal('unsubscribed');
    expect(after.email_subscription_status).to.equal('subscribed');
  });

  it('a POST without the one-click body is a 400 that changes nothing', async () => {
    const { contact, url } = await setup();
    for (const send of [
      () => request(app()).post(pathOf(url)),
      () => request(app()).post(pathOf(url)).type('form').send('List-Unsubscribe=Maybe'),
      () => request(app()).post(pathOf(url)).type('json').send({ 'List-Unsubscribe': 'One-Click' }),
    ]) {
      const res = await send();
      expect(res.status).to.equal(400);
      expect(res.headers['content-type']).to.match(/^text\/html/);
    }
    expect((await statuses(contact.id)).email_subscription_status).to.equal('subscribed');
  });

  it('a tampered token, another key\'s token, a deleted contact, or another account\'s contact is the same 404, and changes nothing', async () => {
    const { contact, url, accountId, key } = await setup();
    const other = await buildTenant();
    const token = pathOf(url).slice(3);
    const tampered = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    // The last character's 2 spare bits: the other spellings of the same bytes are not the link.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token[66]);
    const respelled = [1, 2, 3].map((bits) => `${token.slice(0, 66)}${alphabet[last ^ bits]}`);
    const otherKey = unsubscribeUrl(channelSettings(), { accountId, contactId: contact.id, channel: 'email' });
    // Signed by us, but naming the contact under another account.
    const crossAccount = unsubscribeUrl(settings, { accountId: other.accountId, contactId: contact.id, channel: 'email' });
    const gone = await buildContact(accountId);
    const goneUrl = unsubscribeUrl(settings, { accountId, contactId: gone.id, channel: 'email' });
    await caller(key).contacts.delete({ id: gone.id });
    const bodies = new Set<string>();
    for (const path of [`/u/${tampered}`, ...respelled.map((other) => `/u/${other}`), pathOf(otherKey), pathOf(crossAccount), pathOf(goneUrl), '/u/short', `/u/${'A'.repeat(67)}`]) {
      for (const send of [() => request(app()).get(path), () => request(app()).post(path).type('form').send(ONE_CLICK)]) {
        const res = await send();
        expect(res.status, path).to.equal(404);
        bodies.add(res.text);
      }
    }
    expect(bodies.size).to.equal(1);
    expect([...bodies][0]).not.to.contain(contact.id);
    expect((await statuses(contact.id)).email_subscription_status).to.equal('subscribed');
  });

  it('answers 404 to every link when the server has no secrets key', async () => {
    const { url } = await setup();
    const keyless = appWithChannels(channelSettings({ secrets: null }));
    expect((await request(keyless).get(pathOf(url))).status).to.equal(404);
    expect((await request(keyless).post(pathOf(url)).type('form').send(ONE_CLICK)).status).to.equal(404);
  });

  it('applies an exit rule that watches the email status, in the same transaction: the run is cancelled', async () => {
    const { key, accountId, contact, url } = await setup();
    const { sequence } = await caller(key).sequences.create({
      name: 'Onboarding',
      status: 'active',
      exitWhen: [{ unsubscribed: 'email' }],
      steps: [{ id: 'w', type: 'wait', duration: 'P1D' }],
    } as unknown as CreateInput);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    expect((await storedRuns({ contactId: contact.id })).map((run) => run.status)).to.deep.equal(['pending']);

    await request(app()).post(pathOf(url)).type('form').send(ONE_CLICK).expect(200);
    expect((await storedRuns({ contactId: contact.id })).map((run) => run.status)).to.deep.equal(['cancelled']);
    const types = (await events(accountId)).map((e) => e.type);
    // The enroll's run.created is numbered when the run log is projected: here, after the
    // unsubscribe's contact events (docs/webhooks.md "Order").
    expect(types.slice(-4)).to.deep.equal(['contact.updated', 'contact.subscription_changed', 'run.created', 'run.status_changed']);
  });

  it('limits per client IP only the tokens that do not verify: past the limit they get 429, a genuine one-click from that address 200', async () => {
    const { url, contact } = await setup();
    const limited = appWithChannels(settings, { unsubscribeLimitPerMinute: 3 });
    // A flood of bad tokens (made up, or ours altered) from one address.
    const altered = `${pathOf(url).slice(0, -1)}${pathOf(url).endsWith('A') ? 'B' : 'A'}`;
    for (let i = 0; i < 3; i += 1) expect((await request(limited).post(`/u/bogus${i}`).type('form').send(ONE_CLICK)).status).to.equal(404);
    const refused = await request(limited).post(altered).type('form').send(ONE_CLICK);
    expect(refused.status).to.equal(429);
    expect(refused.headers['retry-after']).to.match(/^\d+$/);
    expect((await request(limited).get('/u/whatever')).status).to.equal(429);
    // The genuine RFC 8058 POST from the same address is served, and so is its page and a repeat.
    const genuine = await request(limited).post(pathOf(url)).type('form').send(ONE_CLICK);
    expect(genuine.status).to.equal(200);
    expect(genuine.text).to.contain('You are unsubscribed');
    expect((await statuses(contact.id))!.email_subscription_status).to.equal('unsubscribed');
    for (let i = 0; i < 5; i += 1) expect((await request(limited).get(pathOf(url))).status).to.equal(200);
    expect((await request(limited).post(pathOf(url)).type('form').send(ONE_CLICK)).status).to.equal(200);
    // Valid tokens were never counted: the bad ones are still refused, no more and no less.
    expect((await request(limited).post('/u/bogus9').type('form').send(ONE_CLICK)).status).to.equal(429);
  });

  it('serves a valid token whose contact is gone as 404 without counting it against the address', async () => {
    const tenant = await buildTenant();
    const gone = unsubscribeUrl(settings, { accountId: tenant.accountId, contactId: '01938a3e-5b2c-7d4e-9f10-2a3b4c5d6e7f', channel: 'email' });
    const limited = appWithChannels(settings, { unsubscribeLimitPerMinute: 1 });
    for (let i = 0; i < 3; i += 1) expect((await request(limited).get(pathOf(gone))).status).to.equal(404);
    expect((await request(limited).get('/u/bogus')).status).to.equal(404);
    expect((await request(limited).get('/u/bogus')).status).to.equal(429);
  });

  it('is not an operation of the API: outside /api/v1 and absent from the OpenAPI document', async () => {
    const document = await request(app()).get('/api/v1/openapi.json');
    expect(Object.keys(document.body.paths).filter((path) => path.startsWith('/u'))).to.deep.equal([]);
    // The form's field is nowhere an operation's input (an email preview's example headers name it).
    const inputs = Object.values(document.body.paths as Record<string, Record<string, { requestBody?: unknown; parameters?: unknown }>>)
      .flatMap((operations) => Object.values(operations))
      .map((operation) => JSON.stringify([operation.requestBody ?? null, operation.parameters ?? null]));
    expect(inputs.filter((input) => input.includes('List-Unsubscribe'))).to.deep.equal([]);
  });
});
