import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { LogLevel } from '../../src/config';
import { testDb, withFailingStatements } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { bufferLogger, type LogRecord } from '../support/log-buffer';

// One line per request, when it is answered: the request id the client got, method, route
// template (never the URL), status, duration, and who called (account and key ids).

function appWithLog(level: LogLevel = 'info', config: { rateLimitPerMinute?: number; authFailureLimitPerMinute?: number } = {}) {
  const log = bufferLogger(level);
  const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000, authFailureLimitPerMinute: 1_000, ...config }, logger: log.logger });
  return { app, log };
}

const accessLines = (records: LogRecord[]) => records.filter((r) => r.msg === 'request completed');

describe('the access log', () => {
  it('writes one line per request with its id, method, route template, status, duration and caller', async () => {
    const { app, log } = appWithLog();
    const { key, accountId, keyId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'traced@example.com' });
    const res = await request(app).get(`/api/v1/contacts/${contact.id}`).set('x-api-key', key).set('x-request-id', 'trace-me-42');
    expect(res.status).to.equal(200);

    const lines = accessLines(log.records());
    expect(lines).to.have.length(1);
    const [line] = lines;
    expect(line).to.include({
      level: 'info',
      reqId: 'trace-me-42',
      method: 'GET',
      route: '/api/v1/contacts/{id}',
      status: 200,
      accountId,
      keyId,
    });
    expect(line.durationMs).to.be.a('number').and.at.least(0);
    // The URL's id, the key, headers and the body stay out of it.
    expect(JSON.stringify(line)).to.not.include(contact.id);
    expect(log.text()).to.not.include(key);
    expect(log.text()).to.not.include('traced@example.com');
  });

  it('names tRPC calls /trpc/<procedure>, and an unknown path "unmatched"', async () => {
    const { app, log } = appWithLog();
    const { key } = await buildTenant();
    await request(app).post('/trpc/contacts.create').set('x-api-key', key).send({ email: 'rpc@example.com' });
    await request(app).get('/api/v1/no/such/path').set('x-api-key', key);
    await request(app).get('/nothing-here');
    expect(accessLines(log.records()).map((r) => [r.route, r.status])).to.deep.equal([
      ['/trpc/contacts.create', 200],
      ['unmatched', 404],
      ['unmatched', 404],
    ]);
  });

  it('puts the request id on every line of the request, the error of a 500 included', async () => {
    const { app, log } = appWithLog();
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    const res = await withFailingStatements({ scope: 'contacts', failure: () => new Error('boom') }, () =>
      request(app).get(`/api/v1/contacts/${contact.id}`).set('x-api-key', key).then((r) => r),
    );
    expect(res.status).to.equal(500);
    const id = res.headers['x-request-id'];
    const lines = log.records().filter((r) => r.reqId === id);
    expect(lines.map((r) => [r.level, r.msg])).to.deep.equal([
      ['error', 'request failed'],
      ['error', 'request completed'],
    ]);
    expect(lines[0]).to.have.nested.property('err.message', 'boom');
    expect(lines[0]).to.have.nested.property('err.stack').that.includes('boom');
  });

  it('says which limiter answered a 429, at info level', async () => {
    const { app, log } = appWithLog('info', { rateLimitPerMinute: 1, authFailureLimitPerMinute: 1 });
    const { key } = await buildTenant();
    for (let i = 0; i < 2; i += 1) await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', key);
    for (let i = 0; i < 2; i += 1) await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', 'svc_bad');
    expect(accessLines(log.records()).map((r) => [r.status, r.limiter ?? null, r.level])).to.deep.equal([
      [404, null, 'info'],
      [429, 'api-key', 'info'],
      [401, null, 'info'],
      [429, 'failed-auth', 'info'],
    ]);
  });

  it('logs probe successes at debug only, and a failed probe at info', async () => {
    const { app, log } = appWithLog('info');
    await request(app).get('/healthz');
    await request(app).get('/readyz');
    expect(accessLines(log.records())).to.deep.equal([]);
    await withFailingStatements({ scope: 'all', failure: () => new Error('connect ECONNREFUSED') }, () => request(app).get('/readyz').then((r) => r));
    expect(accessLines(log.records()).map((r) => [r.route, r.status, r.level])).to.deep.equal([['/readyz', 503, 'info']]);

    const debug = appWithLog('debug');
    await request(debug.app).get('/healthz');
    expect(accessLines(debug.log.records()).map((r) => [r.route, r.level])).to.deep.equal([['/healthz', 'debug']]);
  });

  it('writes nothing at LOG_LEVEL=silent', async () => {
    const { app, log } = appWithLog('silent');
    const { key } = await buildTenant();
    await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', key);
    expect(log.text()).to.equal('');
  });
});
