import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Express } from 'express';
import { ConnectionRefusedError } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db/database';
import { withTransaction } from '../../src/db/sql/transaction';
import { startMetricsServer } from '../../src/metrics/metrics-server';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { createMetrics, type Metrics } from '../../src/metrics/metrics';
import { silentLogger } from '../support/app';
import { TEST_DATABASE_URL, testDb, withFailingStatements } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { parseExposition, samplesOf, valueOf, type Exposition } from '../support/prometheus-text';

// GET /metrics (docs/operations.md "Metrics"): Prometheus text, behind a bearer token or on a port of its
// own; request durations by route template, 429s by limiter, 503s by cause, transaction
// retries and deadlocks, the database pool, process metrics.

const TOKEN = 'metrics-token-0123456789';
const refused = () => new ConnectionRefusedError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));

function metricsApp(options: { metrics?: Metrics; rateLimitLog?: RedisSlidingLog; token?: string } = {}): Express {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 2, authFailureLimitPerMinute: 1, metricsToken: options.token ?? TOKEN },
    logger: silentLogger,
    metrics: options.metrics ?? createMetrics(testDb()),
    rateLimitLog: options.rateLimitLog,
  });
}

async function scrape(app: Express): Promise<Exposition> {
  const res = await request(app).get('/metrics').set('authorization', `Bearer ${TOKEN}`);
  expect(res.status, res.text).to.equal(200);
  expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.text);
}

const durationCount = (exposition: Exposition, labels: Record<string, string>) =>
  valueOf(exposition, 'http_request_duration_seconds_count', labels);

describe('GET /metrics', () => {
  describe('access', () => {
    it('does not exist without METRICS_TOKEN or METRICS_PORT: 404 like any unknown path', async () => {
      const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 10 }, logger: silentLogger });
      const res = await request(app).get('/metrics').set('authorization', `Bearer ${TOKEN}`);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include({ error: 'Not found', code: 'not_found' });
      // Measured but not served: no token and no port.
      const measured = createApp({ db: testDb(), config: { rateLimitPerMinute: 10 }, logger: silentLogger, metrics: createMetrics(testDb()) });
      expect((await request(measured).get('/metrics').set('authorization', `Bearer ${TOKEN}`)).status).to.equal(404);
    });

    it('answers 401 with WWW-Authenticate to a missing, wrong or malformed bearer token', async () => {
      const app = metricsApp();
      for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`]) {
        const test = request(app).get('/metrics');
        const res = await (authorization === undefined ? test : test.set('authorization', authorization));
        expect(res.status, String(authorization)).to.equal(401);
        expect(res.headers['www-authenticate']).to.equal('Bearer');
        expect(res.body).to.deep.equal({ error: 'Missing or wrong bearer token' });
        expect(res.text).to.not.include('http_request_duration_seconds');
      }
    });

    it('takes METRICS_TOKEN (16 characters at least) and METRICS_PORT from the environment', () => {
      expect(loadConfig({ METRICS_TOKEN: TOKEN, METRICS_PORT: '9464' })).to.include({ metricsToken: TOKEN, metricsPort: 9464 });
      expect(loadConfig({})).to.include({ metricsToken: undefined, metricsPort: undefined });
      expect(() => loadConfig({ METRICS_TOKEN: 'short' })).to.throw(/METRICS_TOKEN: must be at least 16 characters/);
      expect(() => loadConfig({ METRICS_PORT: '70000' })).to.throw(/METRICS_PORT: must be a port number/);
    });

    it('serves them on METRICS_PORT, and then not on the service\'s port', async () => {
      const metrics = createMetrics(testDb());
      const app = createApp({
        db: testDb(),
        config: { rateLimitPerMinute: 10, metricsToken: TOKEN, metricsPort: 9464 },
        logger: silentLogger,
        metrics,
      });
      await request(app).get('/healthz');
      expect((await request(app).get('/metrics').set('authorization', `Bearer ${TOKEN}`)).status).to.equal(404);

      const open = await startMetricsServer({ metrics, port: 0, host: '127.0.0.1' });
      const guarded = await startMetricsServer({ metrics, port: 0, host: '127.0.0.1', token: TOKEN });
      try {
        const url = (server: typeof open) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const res = await fetch(`${url(open)}/metrics`);
        expect(res.status).to.equal(200);
        expect(durationCount(parseExposition(await res.text()), { route: '/healthz', status: '200' })).to.equal(1);
        expect((await fetch(`${url(open)}/other`)).status).to.equal(404);
        expect((await fetch(`${url(guarded)}/metrics`)).status).to.equal(401);
        expect((await fetch(`${url(guarded)}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).to.equal(200);
      } finally {
        open.close();
        guarded.close();
      }
    });
  });

  describe('series', () => {
    it('times requests by method, route template and status, never by raw URL', async () => {
      const app = metricsApp();
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'metric@example.com' });
      expect((await request(app).get(`/api/v1/contacts/${contact.id}`).set('x-api-key', key)).status).to.equal(200);
      expect((await request(app).get('/api/v1/contacts/by-email/nobody%40example.com').set('x-api-key', key)).status).to.equal(404);
      expect((await request(app).get('/nothing/here')).status).to.equal(404);
      expect((await request(app).get('/healthz')).status).to.equal(200);

      const exposition = await scrape(app);
      expect(exposition.types.get('http_request_duration_seconds')).to.equal('histogram');
      expect(durationCount(exposition, { method: 'GET', route: '/api/v1/contacts/{id}', status: '200' })).to.equal(1);
      expect(durationCount(exposition, { method: 'GET', route: '/api/v1/contacts/by-email/{email}', status: '404' })).to.equal(1);
      expect(durationCount(exposition, { method: 'GET', route: 'unmatched', status: '404' })).to.equal(1);
      expect(durationCount(exposition, { method: 'GET', route: '/healthz', status: '200' })).to.equal(1);
      const buckets = samplesOf(exposition, 'http_request_duration_seconds_bucket', { route: '/api/v1/contacts/{id}' });
      expect(buckets.find((b) => b.labels.le === '+Inf')?.value).to.equal(1);

      const routes = new Set(samplesOf(exposition, 'http_request_duration_seconds_count').map((s) => s.labels.route));
      expect([...routes].sort()).to.deep.equal(['/api/v1/contacts/by-email/{email}', '/api/v1/contacts/{id}', '/healthz', 'unmatched']);
      const text = JSON.stringify(exposition);
      expect(text).to.not.include(contact.id);
      expect(text).to.not.include('nobody');
    });

    it('names tRPC calls /trpc/<procedure>', async () => {
      const app = metricsApp();
      const { key } = await buildTenant();
      expect((await request(app).post('/trpc/contacts.create').set('x-api-key', key).send({ email: 'rpc@example.com' })).status).to.equal(200);
      expect((await request(app).post('/trpc/no.such.procedure').set('x-api-key', key).send({})).status).to.equal(404);
      const exposition = await scrape(app);
      expect(durationCount(exposition, { method: 'POST', route: '/trpc/contacts.create', status: '200' })).to.equal(1);
      expect(durationCount(exposition, { method: 'POST', route: 'unmatched', status: '404' })).to.equal(1);
    });

    it('counts 429s by limiter: per key and failed authentication per IP', async () => {
      const app = metricsApp();
      const { key } = await buildTenant();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await request(app).get('/api/v1/contacts/by-email/a%40b.io').set('x-api-key', key)).status);
      for (let i = 0; i < 2; i += 1) statuses.push((await request(app).get('/api/v1/contacts/by-email/a%40b.io').set('x-api-key', 'svc_nope')).status);
      expect(statuses).to.deep.equal([404, 404, 429, 401, 429]);

      const exposition = await scrape(app);
      expect(valueOf(exposition, 'http_rate_limited_total', { limiter: 'api-key' })).to.equal(1);
      expect(valueOf(exposition, 'http_rate_limited_total', { limiter: 'failed-auth' })).to.equal(1);
      expect(durationCount(exposition, { route: '/api/v1/contacts/by-email/{email}', status: '429' })).to.equal(2);
    });

    it('counts 503s by cause: the database and the rate-limit store', async () => {
      const failingStore = new RedisSlidingLog({ sendCommand: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')) });
      const metrics = createMetrics(testDb());
      const app = metricsApp({ metrics });
      const redisDown = metricsApp({ metrics, rateLimitLog: failingStore });
      const { key } = await buildTenant();

      const statuses = await withFailingStatements({ scope: 'contacts', failure: refused }, async () => [
        (await request(app).get('/api/v1/contacts/by-email/a%40b.io').set('x-api-key', key)).status,
        (await request(app).post('/trpc/contacts.create').set('x-api-key', key).send({ email: 'x@b.io' })).status,
      ]);
      statuses.push((await request(redisDown).get('/api/v1/contacts/by-email/a%40b.io').set('x-api-key', key)).status);
      expect(statuses).to.deep.equal([503, 503, 503]);

      const exposition = await scrape(app);
      expect(valueOf(exposition, 'http_service_unavailable_total', { cause: 'database' })).to.equal(2);
      expect(valueOf(exposition, 'http_service_unavailable_total', { cause: 'redis' })).to.equal(1);
      expect(valueOf(exposition, 'http_service_unavailable_total', { cause: 'database_busy' })).to.equal(0);
      expect(durationCount(exposition, { route: '/trpc/contacts.create', status: '503' })).to.equal(1);
    });

    it('keeps each app\'s counts apart (one registry per app)', async () => {
      const first = metricsApp();
      const second = metricsApp();
      await request(first).get('/healthz');
      await request(first).get('/healthz');
      await request(second).get('/healthz');
      expect(durationCount(await scrape(first), { route: '/healthz' })).to.equal(2);
      expect(durationCount(await scrape(second), { route: '/healthz' })).to.equal(1);
    });

    it('reports process metrics', async () => {
      const exposition = await scrape(metricsApp());
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
        expect(samplesOf(exposition, name), name).to.not.be.empty;
      }
    });

    it('reports transaction retries and deadlocks, and the pool, of a MySQL database', async () => {
      const pool = { size: 7, available: 2, using: 5, waiting: 3 };
      const db = { dialect: 'mysql', sequelize: { transaction: (fn: (t: unknown) => Promise<unknown>) => fn({}), connectionManager: { pool } } } as unknown as Database;
      const metrics = createMetrics(db);
      let attempt = 0;
      await withTransaction(db, async () => {
        attempt += 1;
        if (attempt < 3) throw Object.assign(new Error('Deadlock found'), { parent: { errno: 1213 } });
      });
      const exposition = parseExposition(await metrics.registry.metrics());
      expect(valueOf(exposition, 'db_transaction_retries_total')).to.equal(2);
      expect(valueOf(exposition, 'db_deadlocks_total')).to.equal(2);
      expect(valueOf(exposition, 'db_pool_connections')).to.equal(7);
      expect(valueOf(exposition, 'db_pool_connections_in_use')).to.equal(5);
      expect(valueOf(exposition, 'db_pool_waiting')).to.equal(3);
    });

    it('reports the test database\'s pool when it is MySQL, and none on SQLite', async () => {
      const exposition = await scrape(metricsApp());
      expect(valueOf(exposition, 'db_transaction_retries_total')).to.be.a('number');
      expect(valueOf(exposition, 'db_deadlocks_total')).to.be.a('number');
      if (TEST_DATABASE_URL.startsWith('mysql://')) {
        expect(valueOf(exposition, 'db_pool_connections')).to.be.at.least(1);
        expect(valueOf(exposition, 'db_pool_connections_in_use')).to.be.a('number');
        expect(valueOf(exposition, 'db_pool_waiting')).to.equal(0);
      } else {
        expect(samplesOf(exposition, 'db_pool_connections')).to.be.empty;
      }
    });
  });
});
