import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import { openDatabase } from '../../src/db/database';
import { api, silentLogger, testApp } from '../support/app';
import { rebindModelsToTestDb, testDb, withFailingContactQueries } from '../support/db';
import { buildTenant } from '../support/factories';

// What the HTTP layer itself answers, whatever the procedure: body parsing, routing, health,
// request ids, and the 500 that must not tell a client anything.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = 'connect ECONNREFUSED 10.1.2.3:3306 as svc_admin';

describe('HTTP transport', () => {
  describe('request bodies', () => {
    it('answers 400 "Malformed JSON body" to JSON that does not parse', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').set('content-type', 'application/json').send('{"email": "a@b.co",');
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include({ error: 'Malformed JSON body' });
    });

    it('answers 400 "Malformed JSON body" on the tRPC endpoint too', async () => {
      const { key } = await buildTenant();
      const res = await request(testApp())
        .post('/trpc/contacts.create')
        .set('x-api-key', key)
        .set('content-type', 'application/json')
        .send('{"email"');
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.include('Malformed JSON body');
    });

    it('answers 413 with an error body to a body over 1 MiB', async () => {
      const { key } = await buildTenant();
      const body = JSON.stringify({ email: 'ada@example.com', customFields: { blob: 'x'.repeat(1024 * 1024) } });
      const res = await api(key).post('/contacts').set('content-type', 'application/json').send(body);
      expect(res.status).to.equal(413);
      expect(res.body).to.have.all.keys('error', 'code', 'requestId');
      expect(res.body.error).to.be.a('string').and.not.equal('');
    });

    it('accepts a body just under 1 MiB as far as the size limit goes', async () => {
      const { key } = await buildTenant();
      // 16 KiB of customFields is the contact limit, so this answers 400, but not 413.
      const body = JSON.stringify({ email: 'ada@example.com', customFields: { blob: 'x'.repeat(1000 * 1000) } });
      const res = await api(key).post('/contacts').set('content-type', 'application/json').send(body);
      expect(res.status).to.equal(400);
    });

    it('answers 415 with an error body to a form-encoded body', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').type('form').send('email=ada%40example.com');
      expect(res.status).to.equal(415);
      expect(res.body).to.have.all.keys('error', 'code', 'requestId');
      expect(res.body.error).to.be.a('string').and.not.equal('');
    });

    it('accepts application/json with a charset parameter', async () => {
      const { key } = await buildTenant();
      const res = await api(key)
        .post('/contacts')
        .set('content-type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ email: 'ada@example.com' }));
      expect(res.status).to.equal(201);
    });
  });

  describe('routing', () => {
    it('answers 404 "Not found" to an unknown route under /api/v1 with a valid key', async () => {
      const { key } = await buildTenant();
      const res = await api(key).get('/no-such-resource');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include({ error: 'Not found' });
    });

    it('answers 405 with Allow to a known path with a method it does not serve', async () => {
      const { key } = await buildTenant();
      const res = await api(key).patch('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(405);
      expect(res.headers.allow).to.equal('GET, POST');
      expect(res.body).to.deep.include({ code: 'method_not_allowed' });
    });

    it('answers 404 "Not found" to a path outside every surface', async () => {
      const res = await request(testApp()).get('/no/such/page');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include({ error: 'Not found' });
    });
  });

  describe('health', () => {
    it('answers GET /healthz with 200 without a key', async () => {
      const res = await request(testApp()).get('/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('answers GET /readyz with 200 without a key while the database answers', async () => {
      const res = await request(testApp()).get('/readyz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ready' });
    });

    describe('when the database is unreachable', () => {
      afterEach(rebindModelsToTestDb);

      it('answers GET /readyz with 503 and an error body, while /healthz stays 200', async () => {
        const db = openDatabase('sqlite::memory:');
        const app = createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: silentLogger });
        expect((await request(app).get('/readyz')).status).to.equal(200);
        await db.close();

        const res = await request(app).get('/readyz');
        expect(res.status).to.equal(503);
        expect(res.body).to.have.all.keys('error');
        expect(res.body.error).to.be.a('string').and.not.equal('');
        expect((await request(app).get('/healthz')).status).to.equal(200);
      });
    });
  });

  describe('unexpected failures', () => {
    it('answers a REST 500 with exactly { error: "Internal server error" }', async () => {
      const { key } = await buildTenant();
      const res = await withFailingContactQueries(() => api(key).post('/contacts').send({ email: 'ada@example.com' }), SECRET);
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'Internal server error' });
      expect(res.text).to.not.include('ECONNREFUSED');
    });

    it('answers a tRPC 500 with the message "Internal server error" and no stack', async () => {
      const { key } = await buildTenant();
      const res = await withFailingContactQueries(
        () => request(testApp()).post('/trpc/contacts.create').set('x-api-key', key).send({ email: 'ada@example.com' }),
        SECRET,
      );
      expect(res.status).to.equal(500);
      expect(res.body.error.message).to.equal('Internal server error');
      expect(res.body.error.data.code).to.equal('INTERNAL_SERVER_ERROR');
      expect(res.body.error.data).to.not.have.property('stack');
      expect(res.text).to.not.include('ECONNREFUSED');
      expect(res.text).to.not.match(/\bat .+\.ts:\d+/);
    });

    it('answers 500 without details when the key lookup itself fails', async () => {
      const { key } = await buildTenant();
      const { sequelize } = testDb();
      const original = sequelize.query;
      sequelize.query = (() => Promise.reject(new Error(SECRET))) as unknown as typeof original;
      let res: request.Response;
      try {
        res = await api(key).get(`/contacts/${randomUUID()}`);
      } finally {
        sequelize.query = original;
      }
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'Internal server error' });
    });

    it('serves normally again once the failure is gone', async () => {
      const { key } = await buildTenant();
      await withFailingContactQueries(() => api(key).post('/contacts').send({ email: 'ada@example.com' }), SECRET);
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(201);
    });
  });

  describe('X-Request-Id', () => {
    it('echoes a sane X-Request-Id given by the caller', async () => {
      const res = await request(testApp()).get('/healthz').set('x-request-id', 'req-2026.11_21-abc');
      expect(res.headers['x-request-id']).to.equal('req-2026.11_21-abc');
    });

    it('echoes it on keyed and failed requests as well', async () => {
      const res = await api().get('/contacts').set('x-request-id', 'abc123');
      expect(res.status).to.equal(401);
      expect(res.headers['x-request-id']).to.equal('abc123');
    });

    it('generates a UUID when none is given, a different one per request', async () => {
      const first = await request(testApp()).get('/healthz');
      const second = await request(testApp()).get('/healthz');
      expect(first.headers['x-request-id']).to.match(UUID);
      expect(second.headers['x-request-id']).to.match(UUID);
      expect(first.headers['x-request-id']).to.not.equal(second.headers['x-request-id']);
    });

    for (const [description, given] of [
      ['spaces and symbols', 'evil id; drop table'],
      ['over 64 characters', 'a'.repeat(65)],
      ['characters that could forge a log line', '{"level":"error"}'],
    ]) {
      it(`replaces a caller's X-Request-Id with ${description} by a generated UUID`, async () => {
        const res = await request(testApp()).get('/healthz').set('x-request-id', given);
        expect(res.headers['x-request-id']).to.match(UUID);
        expect(res.headers['x-request-id']).to.not.equal(given);
      });
    }
  });
});
