import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Express } from 'express';
import { ConnectionRefusedError } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app';
import { silentLogger, testApp } from '../support/app';
import { SEQUENCE_HAS_RUNS } from '../../src/services/sequences/delete-sequence';
import { testDb, withFailingStatements } from '../support/db';
import { buildAccount, buildApiKey, buildContact, buildSequence, buildTenant } from '../support/factories';

// Every error body is { error, code, requestId } (plus details on a validation 400) on REST,
// and tRPC's envelope with data.appCode and data.requestId on /trpc (docs/errors.md).

type Res = request.Response;
const OVER_1_MIB = JSON.stringify({ email: 'a@example.com', customFields: { blob: 'x'.repeat(1024 * 1024 + 10) } });

function expectRest(res: Res, status: number, code: string, error?: string) {
  expect(res.status, res.text).to.equal(status);
  const requestId = res.headers['x-request-id'];
  expect(requestId).to.be.a('string').and.not.equal('');
  const keys = code === 'validation_failed' ? ['error', 'code', 'requestId', 'details'] : ['error', 'code', 'requestId'];
  expect(res.body).to.have.all.keys(...keys);
  expect(res.body).to.include({ code, requestId });
  if (error) expect(res.body.error).to.equal(error);
}

function expectTrpc(res: Res, status: number, code: string, error?: string) {
  expect(res.status, res.text).to.equal(status);
  const requestId = res.headers['x-request-id'];
  expect(requestId).to.be.a('string').and.not.equal('');
  expect(res.body.error.data).to.include({ appCode: code, requestId, httpStatus: status });
  expect(res.body.error.data.code).to.be.a('string');
  if (error) expect(res.body.error.message).to.equal(error);
}

const rest = (key?: string, app: Express = testApp()) => {
  const withKey = (test: request.Test) => (key ? test.set('x-api-key', key) : test);
  return {
    get: (path: string) => withKey(request(app).get(`/api/v1${path}`)),
    post: (path: string) => withKey(request(app).post(`/api/v1${path}`)),
    patch: (path: string) => withKey(request(app).patch(`/api/v1${path}`)),
    delete: (path: string) => withKey(request(app).delete(`/api/v1${path}`)),
  };
};
const rpc = (key?: string, app: Express = testApp()) => {
  const withKey = (test: request.Test) => (key ? test.set('x-api-key', key) : test);
  return {
    query: (path: string, input: unknown) => withKey(request(app).get(`/trpc/${path}`).query({ input: JSON.stringify(input) })),
    mutation: (path: string) => withKey(request(app).post(`/trpc/${path}`)),
  };
};

describe('Error codes on both transports', () => {
  describe('401', () => {
    it('missing_api_key', async () => {
      expectRest(await rest().post('/contacts').send({ email: 'a@example.com' }), 401, 'missing_api_key', 'Missing x-api-key header');
      expectTrpc(await rpc().mutation('contacts.create').send({ email: 'a@example.com' }), 401, 'missing_api_key', 'Missing x-api-key header');
    });

    it('invalid_api_key', async () => {
      const bogus = `svc_${'b'.repeat(40)}`;
      expectRest(await rest(bogus).get(`/contacts/${randomUUID()}`), 401, 'invalid_api_key', 'Invalid API key');
      expectTrpc(await rpc(bogus).query('contacts.get', { id: randomUUID() }), 401, 'invalid_api_key', 'Invalid API key');
    });

    it('api_key_inactive', async () => {
      const account = await buildAccount();
      const { key } = await buildApiKey(account.id, { active: false });
      expectRest(await rest(key).get(`/contacts/${randomUUID()}`), 401, 'api_key_inactive', 'API key is inactive');
      expectTrpc(await rpc(key).query('contacts.get', { id: randomUUID() }), 401, 'api_key_inactive', 'API key is inactive');
    });

    it('api_key_expired', async () => {
      const account = await buildAccount();
      const { key } = await buildApiKey(account.id, { expiresAt: new Date(Date.now() - 60_000) });
      expectRest(await rest(key).get(`/contacts/${randomUUID()}`), 401, 'api_key_expired', 'API key has expired');
      expectTrpc(await rpc(key).query('contacts.get', { id: randomUUID() }), 401, 'api_key_expired', 'API key has expired');
    });
  });

  it('403 forbidden (an integration key on the runner-only procedure; no REST route has one)', async () => {
    const { key } = await buildTenant();
    expectTrpc(await rpc(key).mutation('runs.transition').send({ runId: randomUUID(), status: 'running' }), 403, 'forbidden');
  });

  it('400 validation_failed, with details', async () => {
    const { key } = await buildTenant();
    const restRes = await rest(key).post('/contacts').send({ email: 'nope' });
    expectRest(restRes, 400, 'validation_failed');
    expect(restRes.body.details[0].path).to.equal('email');
    const rpcRes = await rpc(key).mutation('contacts.create').send({ email: 'nope' });
    expectTrpc(rpcRes, 400, 'validation_failed');
    expect(rpcRes.body.error.data.details[0].path).to.equal('email');
  });

  it('400 malformed_json', async () => {
    const { key } = await buildTenant();
    const bad = '{"email":';
    expectRest(await rest(key).post('/contacts').set('content-type', 'application/json').send(bad), 400, 'malformed_json', 'Malformed JSON body');
    expectTrpc(await rpc(key).mutation('contacts.create').set('content-type', 'application/json').send(bad), 400, 'malformed_json', 'Malformed JSON body');
  });

  it('415 unsupported_media_type', async () => {
    const { key } = await buildTenant();
    expectRest(await rest(key).post('/contacts').type('form').send('email=a%40b.co'), 415, 'unsupported_media_type');
    const encoded = await rest(key).post('/contacts').set('content-type', 'application/json; charset=latin-9').send('{}');
    expectRest(encoded, 415, 'unsupported_media_type');
    expectTrpc(await rpc(key).mutation('contacts.create').type('form').send('email=a%40b.co'), 415, 'unsupported_media_type');
  });

  it('413 payload_too_large', async () => {
    const { key } = await buildTenant();
    expectRest(await rest(key).post('/contacts').set('content-type', 'application/json').send(OVER_1_MIB), 413, 'payload_too_large');
    expectTrpc(await rpc(key).mutation('contacts.create').set('content-type', 'application/json').send(OVER_1_MIB), 413, 'payload_too_large');
  });

  it('405 method_not_allowed: a path of the API with a method it does not take', async () => {
    const { key } = await buildTenant();
    const res = await rest(key).patch('/contacts').send({});
    expectRest(res, 405, 'method_not_allowed', 'Method PATCH is not allowed here; use GET, POST');
    expect(res.headers.allow).to.equal('GET, POST');
  });

  it('404 not_found: unknown resource, unknown path, unknown procedure', async () => {
    const { key } = await buildTenant();
    expectRest(await rest(key).get(`/contacts/${randomUUID()}`), 404, 'not_found', 'Contact not found');
    expectRest(await rest(key).post(`/sequences/${randomUUID()}/trigger`).send({ contact: { email: 'a@example.com' } }), 404, 'not_found', 'Sequence not found');
    expectRest(await rest(key).get('/no-such-path'), 404, 'not_found');
    expectTrpc(await rpc(key).query('contacts.get', { id: randomUUID() }), 404, 'not_found', 'Contact not found');
    expectTrpc(await rpc(key).mutation('contacts.noSuchProcedure').send({}), 404, 'not_found');
  });

  it('409 contact_exists', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    expectRest(await rest(key).post('/contacts').send({ email: contact.email }), 409, 'contact_exists', 'A contact with this email already exists');
    expectTrpc(await rpc(key).mutation('contacts.create').send({ email: contact.email }), 409, 'contact_exists', 'A contact with this email already exists');
  });

  it('409 sequence_not_active', async () => {
    const { key, accountId } = await buildTenant();
    const paused = await buildSequence(accountId, 'paused');
    const body = { contact: { email: 'a@example.com' } };
    expectRest(await rest(key).post(`/sequences/${paused.id}/trigger`).send(body), 409, 'sequence_not_active', 'Sequence is not active');
    expectTrpc(await rpc(key).mutation('sequences.trigger').send({ id: paused.id, ...body }), 409, 'sequence_not_active', 'Sequence is not active');
  });

  it('409 sequence_has_runs', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    await rest(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: 'a@example.com' } }).expect(202);
    expectRest(await rest(key).delete(`/sequences/${sequence.id}`), 409, 'sequence_has_runs', SEQUENCE_HAS_RUNS);
    expectTrpc(await rpc(key).mutation('sequences.delete').send({ id: sequence.id }), 409, 'sequence_has_runs', SEQUENCE_HAS_RUNS);
  });

  it('422 idempotency_key_reused, and 400 for a key over 255 characters, on tRPC too (REST: idempotency.test.ts)', async () => {
    const { key } = await buildTenant();
    await rpc(key).mutation('contacts.create').set('Idempotency-Key', 'k').send({ email: 'a@example.com' }).expect(200);
    const reused = await rpc(key).mutation('contacts.create').set('Idempotency-Key', 'k').send({ email: 'b@example.com' });
    expectTrpc(reused, 422, 'idempotency_key_reused');
    expectRest(await rest(key).post('/contacts').set('Idempotency-Key', 'k').send({ email: 'a@example.com' }), 422, 'idempotency_key_reused');
    const tooLong = await rpc(key).mutation('contacts.create').set('Idempotency-Key', 'k'.repeat(256)).send({ email: 'c@example.com' });
    expectTrpc(tooLong, 400, 'validation_failed');
  });

  it('429 rate_limited from both limiters', async () => {
    const { key } = await buildTenant();
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1, authFailureLimitPerMinute: 1 }, logger: silentLogger });
    await rest(key, app).get(`/contacts/${randomUUID()}`);
    expectRest(await rest(key, app).get(`/contacts/${randomUUID()}`), 429, 'rate_limited', 'Rate limit exceeded');
    expectTrpc(await rpc(key, app).query('contacts.get', { id: randomUUID() }), 429, 'rate_limited', 'Rate limit exceeded');
    const bogus = `svc_${'c'.repeat(40)}`;
    await rest(bogus, app).get(`/contacts/${randomUUID()}`);
    expectRest(await rest(bogus, app).get(`/contacts/${randomUUID()}`), 429, 'rate_limited');
    expectTrpc(await rpc(bogus, app).query('contacts.get', { id: randomUUID() }), 429, 'rate_limited');
  });

  it('503 service_unavailable when the database is unreachable', async () => {
    const { key } = await buildTenant();
    const refused = () => new ConnectionRefusedError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));
    await withFailingStatements({ scope: 'contacts', failure: refused }, async () => {
      expectRest(await rest(key).get(`/contacts/${randomUUID()}`), 503, 'service_unavailable', 'Database unavailable; retry shortly');
      expectTrpc(await rpc(key).query('contacts.get', { id: randomUUID() }), 503, 'service_unavailable', 'Database unavailable; retry shortly');
    });
    await withFailingStatements({ scope: 'all', failure: refused }, async () => {
      expectRest(await rest(key).get(`/contacts/${randomUUID()}`), 503, 'service_unavailable');
      expectTrpc(await rpc(key).query('contacts.get', { id: randomUUID() }), 503, 'service_unavailable');
    });
  });

  it('500 internal_error, with nothing of the failure in the body', async () => {
    const { key } = await buildTenant();
    const secret = () => new Error('SELECT * FROM contacts: password=hunter2 at /srv/app/src/db.ts:12');
    await withFailingStatements({ scope: 'contacts', failure: secret }, async () => {
      const restRes = await rest(key).post('/contacts').send({ email: 'a@example.com' });
      expectRest(restRes, 500, 'internal_error', 'Internal server error');
      expect(restRes.text).to.not.match(/hunter2|SELECT|srv/);
      const rpcRes = await rpc(key).mutation('contacts.create').send({ email: 'a@example.com' });
      expectTrpc(rpcRes, 500, 'internal_error', 'Internal server error');
      expect(rpcRes.text).to.not.match(/hunter2|SELECT|srv|stack/);
    });
  });
});

describe('Location on 201', () => {
  it('is set on create and on an upsert that creates, and absent on an upsert that updates', async () => {
    const { key } = await buildTenant();
    const created = await rest(key).post('/contacts').send({ email: 'a@example.com' });
    expect(created.status).to.equal(201);
    expect(created.headers.location).to.equal(`/api/v1/contacts/${created.body.contact.id}`);
    const followed = await request(testApp()).get(created.headers.location).set('x-api-key', key);
    expect(followed.body.contact.id).to.equal(created.body.contact.id);

    const upserted = await rest(key).post('/contacts/upsert').send({ email: 'b@example.com' });
    expect(upserted.status).to.equal(201);
    expect(upserted.headers.location).to.equal(`/api/v1/contacts/${upserted.body.contact.id}`);

    const updated = await rest(key).post('/contacts/upsert').send({ email: 'b@example.com', firstName: 'Bo' });
    expect(updated.status).to.equal(200);
    expect(updated.headers.location).to.equal(undefined);
  });

  it('is set on a webhook endpoint\'s create, and leads to it', async () => {
    const { key } = await buildTenant();
    const created = await rest(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
    expect(created.status).to.equal(201);
    expect(created.headers.location).to.equal(`/api/v1/webhooks/${created.body.webhook.id}`);
    const followed = await request(testApp()).get(created.headers.location).set('x-api-key', key);
    expect(followed.status).to.equal(200);
    expect(followed.body.webhook.id).to.equal(created.body.webhook.id);
  });
});
