import { expect } from 'chai';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../../src/app';
import type { WebhookSettings } from '../../src/services/webhooks/webhook-settings';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

function appWith(webhooks?: WebhookSettings) {
  let built: ReturnType<typeof createApp> | undefined;
  const app = () => (built ??= createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, webhooks }));
  return (key: string) => ({
    get: (path: string) => request(app()).get(`/api/v1${path}`).set('x-api-key', key),
    post: (path: string) => request(app()).post(`/api/v1${path}`).set('x-api-key', key),
    patch: (path: string) => request(app()).patch(`/api/v1${path}`).set('x-api-key', key),
    delete: (path: string) => request(app()).delete(`/api/v1${path}`).set('x-api-key', key),
  });
}

const secure = appWith();

describe('webhook endpoints over REST', () => {
  it('creates an endpoint with a whsec_ secret shown once, which standardwebhooks accepts', async () => {
    const { key } = await buildTenant();
    const created = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a', events: ['contact.created'], description: 'CRM' });
    expect(created.status).to.equal(201);
    expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(() => new Webhook(created.body.secret)).not.to.throw();
    expect(created.body.webhook).to.include({ url: 'https://hooks.example.com/a', description: 'CRM', enabled: true });
    expect(created.body.webhook.events).to.deep.equal(['contact.created']);

    const got = await secure(key).get(`/webhooks/${created.body.webhook.id}`);
    expect(got.status).to.equal(200);
    expect(JSON.stringify(got.body)).not.to.contain(created.body.secret);
    const list = await secure(key).get('/webhooks');
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).to.deep.equal([created.body.webhook.id]);
    expect(JSON.stringify(list.body)).not.to.contain('whsec_');
  });

  it('refuses http, special-use addresses and unknown event types with 400, writing nothing', async () => {
    const { key } = await buildTenant();
    for (const url of [
      'http://hooks.example.com/a',
      'https://127.0.0.1/a',
      'https://10.1.2.3/a',
      'https://192.168.0.10/a',
      'https://169.254.169.254/latest',
      'https://[::1]/a',
      'https://[fe80::1]/a',
      'https://[::ffff:127.0.0.1]/a',
      'https://localhost/a',
      'https://user:pw@hooks.example.com/a',
      'not a url',
    ]) {
      const response = await secure(key).post('/webhooks').send({ url });
      expect(response.status, url).to.equal(400);
      expect(response.body.error).to.be.a('string');
    }
    const badType = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a', events: ['contact.exploded'] });
    expect(badType.status).to.equal(400);
    expect((await secure(key).get('/webhooks')).body.webhooks).to.deep.equal([]);
  });

  it('allows http and loopback with WEBHOOK_ALLOW_INSECURE', async () => {
    const { key } = await buildTenant();
    const insecure = appWith({ allowInsecure: true, now: () => new Date() });
    const response = await insecure(key).post('/webhooks').send({ url: 'http://127.0.0.1:9/hook' });
    expect(response.status).to.equal(201);
  });

  it('updates url, events, enabled and description; refuses a private url on update', async () => {
    const { key } = await buildTenant();
    const { body } = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    const id = body.webhook.id;
    const patched = await secure(key).patch(`/webhooks/${id}`).send({ url: 'https://other.example.com/b', events: ['run.created'], enabled: false, description: 'x' });
    expect(patched.status).to.equal(200);
    expect(patched.body.webhook).to.include({ url: 'https://other.example.com/b', enabled: false, description: 'x' });
    expect(patched.body.webhook.events).to.deep.equal(['run.created']);
    const refused = await secure(key).patch(`/webhooks/${id}`).send({ url: 'https://10.0.0.1/' });
    expect(refused.status).to.equal(400);
    expect((await secure(key).get(`/webhooks/${id}`)).body.webhook.url).to.equal('https://other.example.com/b');
    expect((await secure(key).patch(`/webhooks/${id}`).send({})).status).to.equal(400);
  });

  it('answers 404 for unknown ids, non-UUIDs and another account\'s endpoint', async () => {
    const owner = await buildTenant();
    const other = await buildTenant();
    const { body } = await secure(owner.key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    const id = body.webhook.id;
    for (const path of [`/webhooks/${id}`, '/webhooks/00000000-0000-4000-8000-000000000000', '/webhooks/nope']) {
      expect((await secure(other.key).get(path)).status, path).to.equal(404);
    }
    expect((await secure(other.key).patch(`/webhooks/${id}`).send({ enabled: false })).status).to.equal(404);
    expect((await secure(other.key).delete(`/webhooks/${id}`)).status).to.equal(404);
    expect((await secure(other.key).post(`/webhooks/${id}/rotate-secret`).send({})).status).to.equal(404);
    expect((await secure(other.key).post(`/webhooks/${id}/test`).send({})).status).to.equal(404);
    expect((await secure(other.key).get(`/webhooks/${id}/deliveries`)).status).to.equal(404);
    expect((await secure(other.key).get('/webhooks')).body.webhooks).to.deep.equal([]);
    expect((await secure(owner.key).get(`/webhooks/${id}`)).body.webhook.enabled).to.equal(true);
  });

  it('deletes an endpoint: 204, then 404', async () => {
    const { key } = await buildTenant();
    const { body } = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    expect((await secure(key).delete(`/webhooks/${body.webhook.id}`)).status).to.equal(204);
    expect((await secure(key).get(`/webhooks/${body.webhook.id}`)).status).to.equal(404);
  });

  it('rotates the secret: a new one, the previous valid for 24 h', async () => {
    const { key } = await buildTenant();
    const { body } = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    const rotated = await secure(key).post(`/webhooks/${body.webhook.id}/rotate-secret`).send({});
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret).to.match(/^whsec_/).and.not.equal(body.secret);
    const expires = Date.parse(rotated.body.webhook.previousSecretExpiresAt);
    expect(expires - Date.now()).to.be.within(24 * 3_600_000 - 60_000, 24 * 3_600_000);
  });

  it('rejects a bad deliveries cursor and limit with 400', async () => {
    const { key } = await buildTenant();
    const { body } = await secure(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    expect((await secure(key).get(`/webhooks/${body.webhook.id}/deliveries?cursor=abc`)).status).to.equal(400);
    expect((await secure(key).get(`/webhooks/${body.webhook.id}/deliveries?limit=0`)).status).to.equal(400);
    const empty = await secure(key).get(`/webhooks/${body.webhook.id}/deliveries`);
    expect(empty.body).to.deep.equal({ attempts: [], nextCursor: null });
  });
});
