import { expect } from 'chai';
import type { Express } from 'express';
import { randomUUID } from 'node:crypto';
import { select } from '../../src/db/sql/statements';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// dashboard.webhooks.*: the API's webhook rules, by session, within the signed-in account.

const input = (value: unknown) => `?input=${encodeURIComponent(JSON.stringify(value))}`;

describe('dashboard webhooks procedures', () => {
  let app: Express;
  let cookie: string;
  let accountId: string;

  beforeEach(async () => {
    app = dashboardApp();
    const user = await buildUser();
    accountId = user.accountId;
    cookie = await signInCookie(app, user.email);
  });

  it('creates an endpoint (secret once), lists it, sends a test event, rotates, disables and deletes it', async () => {
    const created = await mutate(app, 'dashboard.webhooks.create', { url: 'https://hooks.example.com/a', events: ['contact.deleted'] }, cookie);
    expect(created.status).to.equal(200);
    const { webhook, secret } = created.body.result.data;
    expect(secret).to.match(/^whsec_/);
    expect(webhook).to.include({ url: 'https://hooks.example.com/a', enabled: true });

    const listed = await query(app, 'dashboard.webhooks.list', cookie);
    expect(listed.body.result.data.webhooks.map((w: { id: string }) => w.id)).to.deep.equal([webhook.id]);
    expect(JSON.stringify(listed.body)).to.not.include(secret);

    const tested = await mutate(app, 'dashboard.webhooks.sendTest', { id: webhook.id }, cookie);
    const [event] = await select<{ type: string }>(testDb(), 'SELECT type FROM events WHERE id = ?', [tested.body.result.data.eventId]);
    expect(event!.type).to.equal('webhook.test');

    const rotated = await mutate(app, 'dashboard.webhooks.rotateSecret', { id: webhook.id }, cookie);
    expect(rotated.body.result.data.secret).to.match(/^whsec_/).and.not.equal(secret);

    const disabled = await mutate(app, 'dashboard.webhooks.setEnabled', { id: webhook.id, enabled: false }, cookie);
    expect(disabled.body.result.data.enabled).to.equal(false);
    const deliveries = await query(app, `dashboard.webhooks.deliveries${input({ id: webhook.id })}`, cookie);
    expect(deliveries.body.result.data).to.deep.equal({ attempts: [], nextCursor: null, stepCalls: [] });

    expect((await mutate(app, 'dashboard.webhooks.delete', { id: webhook.id }, cookie)).status).to.equal(200);
    expect(await select(testDb(), 'SELECT id FROM webhook_endpoints WHERE account_id = ?', [accountId])).to.deep.equal([]);
  });

  it('refuses bad input with the API\'s messages, and writes nothing', async () => {
    for (const [body, path] of [
      [{ url: 'http://hooks.example.com/a' }, 'url'],
      [{ url: 'https://10.0.0.1/a' }, 'url'],
      [{ url: 'https://hooks.example.com/a', events: ['contact.exploded'] }, 'events.0'],
    ] as const) {
      const res = await mutate(app, 'dashboard.webhooks.create', body, cookie);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.data.appCode).to.equal('validation_failed');
      expect(res.body.error.data.details.map((d: { path: string }) => d.path)).to.include(path);
    }
    expect((await mutate(app, 'dashboard.webhooks.setEnabled', { id: 'nope', enabled: true }, cookie)).status).to.equal(400);
    expect(await select(testDb(), 'SELECT id FROM webhook_endpoints WHERE account_id = ?', [accountId])).to.deep.equal([]);
  });

  it('answers 404 for another account\'s endpoint, and leaves it alone', async () => {
    const other = await buildTenant();
    const theirs = await mutate(dashboardApp(), 'dashboard.webhooks.create', { url: 'https://hooks.example.com/b' }, await signInCookie(app, (await buildUser(other.accountId)).email));
    const id = theirs.body.result.data.webhook.id;
    for (const [path, body] of [
      ['dashboard.webhooks.delete', { id }],
      ['dashboard.webhooks.setEnabled', { id, enabled: false }],
      ['dashboard.webhooks.sendTest', { id }],
      ['dashboard.webhooks.rotateSecret', { id: randomUUID() }],
    ] as const) {
      const res = await mutate(app, path, body, cookie);
      expect(res.status, path).to.equal(404);
      expect(res.body.error.message).to.equal('Webhook not found');
    }
    const [row] = await select<{ enabled: number | boolean }>(testDb(), 'SELECT enabled FROM webhook_endpoints WHERE id = ?', [id]);
    expect(Boolean(row!.enabled)).to.equal(true);
  });

  it('needs a session: 401 without one, and an API key is refused', async () => {
    const { key } = await buildTenant();
    expect((await query(app, 'dashboard.webhooks.list')).status).to.equal(401);
    const withKey = await query(app, 'dashboard.webhooks.list').set('x-api-key', key);
    expect(withKey.status).to.equal(401);
    expect(withKey.body.error.data.appCode).to.equal('api_key_not_accepted');
  });
});
