import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import { execute, select } from '../../src/db/sql/statements';
import { requestHash } from '../../src/services/idempotency/idempotency-keys';
import { api, silentLogger, testApp } from '../support/app';
import { captureQueries, testDb, withFailingContactQueries } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';

// Idempotency-Key on POST, with Stripe's semantics (docs/idempotency.md).

const ADA = { email: 'ada@example.com', firstName: 'Ada', tags: ['vip'], customFields: { plan: 'pro', n: 1 } };

async function count(table: string): Promise<number> {
  const [row] = await select<{ n: number }>(testDb(), `SELECT COUNT(*) AS n FROM ${table}`, []);
  return Number(row.n);
}

const HOUR = 3_600_000;

describe('Idempotency-Key', () => {
  it('replays a create: same status, body and Location, Idempotent-Replayed, one contact', async () => {
    const { key } = await buildTenant();
    const first = await api(key).post('/contacts').set('Idempotency-Key', 'k-1').send(ADA);
    expect(first.status).to.equal(201);
    expect(first.headers['idempotent-replayed']).to.equal(undefined);
    const again = await api(key).post('/contacts').set('Idempotency-Key', 'k-1').send(ADA);
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.headers.location).to.equal(`/api/v1/contacts/${first.body.contact.id}`);
    expect(again.headers['content-type']).to.match(/^application\/json/);
    // The replay's own request id, not the original's.
    expect(again.headers['x-request-id']).to.not.equal(first.headers['x-request-id']);
    expect(await count('contacts')).to.equal(1);
  });

  it('replays a body with another key order and spacing as the same request', async () => {
    const { key } = await buildTenant();
    const first = await api(key)
      .post('/contacts')
      .set('Idempotency-Key', 'k-order')
      .set('content-type', 'application/json')
      .send('{"email":"ada@example.com","customFields":{"a":1,"b":{"c":2,"d":3}}}');
    expect(first.status).to.equal(201);
    const again = await api(key)
      .post('/contacts')
      .set('Idempotency-Key', 'k-order')
      .set('content-type', 'application/json')
      .send('{ "customFields": { "b": { "d": 3, "c": 2 }, "a": 1 },\n  "email": "ada@example.com" }');
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
  });

  it('answers 422 idempotency_key_reused to the same key with another body or path, and writes nothing', async () => {
    const { key } = await buildTenant();
    await api(key).post('/contacts').set('Idempotency-Key', 'k-2').send(ADA).expect(201);
    const other = await api(key).post('/contacts').set('Idempotency-Key', 'k-2').send({ ...ADA, email: 'bob@example.com' });
    expect(other.status).to.equal(422);
    expect(other.body).to.deep.equal({
      error: 'This Idempotency-Key was used with a different request',
      code: 'idempotency_key_reused',
      requestId: other.headers['x-request-id'],
    });
    const path = await api(key).post('/contacts/upsert').set('Idempotency-Key', 'k-2').send(ADA);
    expect(path.status).to.equal(422);
    expect(await count('contacts')).to.equal(1);
  });

  it('scopes keys to the account', async () => {
    const a = await buildTenant();
    const b = await buildTenant();
    await api(a.key).post('/contacts').set('Idempotency-Key', 'shared').send(ADA).expect(201);
    const res = await api(b.key).post('/contacts').set('Idempotency-Key', 'shared').send({ email: 'x@example.com' });
    expect(res.status).to.equal(201);
    expect(res.headers['idempotent-replayed']).to.equal(undefined);
  });

  it('runs 10 concurrent identical requests once: the others are 409 in progress or replays', async () => {
    const { key } = await buildTenant();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => api(key).post('/contacts').set('Idempotency-Key', 'race').send(ADA)),
    );
    const executed = answers.filter((res) => res.status === 201 && res.headers['idempotent-replayed'] === undefined);
    expect(executed).to.have.length(1);
    for (const res of answers) {
      if (res.status === 409) expect(res.body.code).to.equal('idempotency_in_progress');
      else {
        expect(res.status).to.equal(201);
        expect(res.body).to.deep.equal(executed[0].body);
      }
    }
    expect(await count('contacts')).to.equal(1);
  });

  it('replays after a restart: a new app instance on the same database', async () => {
    const { key } = await buildTenant();
    const first = await api(key).post('/contacts').set('Idempotency-Key', 'k-restart').send(ADA).expect(201);
    const restarted = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000 }, logger: silentLogger });
    const again = await request(restarted).post('/api/v1/contacts').set('x-api-key', key).set('Idempotency-Key', 'k-restart').send(ADA);
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
  });

  it('replays a trigger without enrolling twice', async () => {
    const { key, account } = await buildTenant();
    const sequence = await buildSequence(account.id);
    const body = { contact: { email: 'ada@example.com' } };
    const first = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-1').send(body);
    expect(first.status).to.equal(202);
    expect(first.body.enrolled).to.equal(true);
    const again = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-1').send(body);
    expect(again.status).to.equal(202);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(await count('sequence_runs')).to.equal(1);
  });

  it('replays a batch without writing again', async () => {
    const { key } = await buildTenant();
    const body = { contacts: [{ email: 'a@example.com' }, { email: 'b@example.com' }] };
    const first = await api(key).post('/contacts/batch').set('Idempotency-Key', 'b-1').send(body);
    expect(first.body).to.deep.equal({ summary: { total: 2, inserted: 2, updated: 0 } });
    const events = await count('events');
    const again = await api(key).post('/contacts/batch').set('Idempotency-Key', 'b-1').send(body);
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(await count('events')).to.equal(events);
  });

  it('stores and replays a 4xx answer', async () => {
    const { key } = await buildTenant();
    const first = await api(key).post('/contacts').set('Idempotency-Key', 'bad').send({ email: 'nope' });
    expect(first.status).to.equal(400);
    const again = await api(key).post('/contacts').set('Idempotency-Key', 'bad').send({ email: 'nope' });
    expect(again.status).to.equal(400);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
  });

  it('keeps no 401 and no 429: the same key runs once the request is let in', async () => {
    const { key } = await buildTenant();
    const denied = await api('svc_' + '0'.repeat(40)).post('/contacts').set('Idempotency-Key', 'k-auth').send(ADA);
    expect(denied.status).to.equal(401);
    const limited = createApp({ db: testDb(), config: { rateLimitPerMinute: 1, authFailureLimitPerMinute: 1_000 }, logger: silentLogger });
    await request(limited).get('/api/v1/contacts/by-email/x%40example.com').set('x-api-key', key);
    const tooMany = await request(limited).post('/api/v1/contacts').set('x-api-key', key).set('Idempotency-Key', 'k-auth').send(ADA);
    expect(tooMany.status).to.equal(429);
    expect(await count('idempotency_keys')).to.equal(0);
    const res = await api(key).post('/contacts').set('Idempotency-Key', 'k-auth').send(ADA);
    expect(res.status).to.equal(201);
    expect(res.headers['idempotent-replayed']).to.equal(undefined);
  });

  it('frees the key after a 500: a retry runs again', async () => {
    const { key } = await buildTenant();
    const failed = await withFailingContactQueries(() => api(key).post('/contacts').set('Idempotency-Key', 'k-500').send(ADA));
    expect(failed.status).to.equal(500);
    expect(await count('idempotency_keys')).to.equal(0);
    const retried = await api(key).post('/contacts').set('Idempotency-Key', 'k-500').send(ADA);
    expect(retried.status).to.equal(201);
    expect(retried.headers['idempotent-replayed']).to.equal(undefined);
  });

  it('answers 409 idempotency_in_progress while a claim is unfinished, and lets a stale claim go', async () => {
    const { key, account } = await buildTenant();
    const now = Date.now();
    const claim = (name: string, lockedUntil: number) =>
      execute(testDb(), 'INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, locked_until, expires_at) VALUES (?, ?, ?, ?, ?)', [
        account.id, name, requestHash('POST', '/api/v1/contacts', ADA), new Date(lockedUntil), new Date(now + 24 * HOUR),
      ]);
    await claim('running', now + 60_000);
    await claim('crashed', now - 1_000);
    const running = await api(key).post('/contacts').set('Idempotency-Key', 'running').send(ADA);
    expect(running.status).to.equal(409);
    expect(running.body).to.include({ code: 'idempotency_in_progress', requestId: running.headers['x-request-id'] });
    const crashed = await api(key).post('/contacts').set('Idempotency-Key', 'crashed').send(ADA);
    expect(crashed.status).to.equal(201);
  });

  it('purges expired keys on write, and an expired key runs again', async () => {
    const { key } = await buildTenant();
    await api(key).post('/contacts').set('Idempotency-Key', 'old').send(ADA).expect(201);
    await execute(testDb(), 'UPDATE idempotency_keys SET expires_at = ?', [new Date(Date.now() - HOUR)]);
    await api(key).post('/contacts').set('Idempotency-Key', 'new').send({ email: 'bob@example.com' }).expect(201);
    const keys = await select<{ idempotency_key: string }>(testDb(), 'SELECT idempotency_key FROM idempotency_keys', []);
    expect(keys.map((row) => row.idempotency_key)).to.deep.equal(['new']);
    const again = await api(key).post('/contacts').set('Idempotency-Key', 'old').send(ADA);
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('contact_exists');
  });

  it('answers 400 validation_failed to a key over 255 characters, and writes nothing', async () => {
    const { key } = await buildTenant();
    const res = await api(key).post('/contacts').set('Idempotency-Key', 'k'.repeat(256)).send(ADA);
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({
      error: 'Idempotency-Key must be 1 to 255 characters',
      code: 'validation_failed',
      details: [{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 characters' }],
      requestId: res.headers['x-request-id'],
    });
    expect(await count('contacts')).to.equal(0);
    await api(key).post('/contacts').set('Idempotency-Key', 'k'.repeat(255)).send(ADA).expect(201);
  });

  it('works on tRPC mutations with the same header', async () => {
    const { key } = await buildTenant();
    const call = () => request(testApp()).post('/trpc/contacts.create').set('x-api-key', key).set('Idempotency-Key', 'rpc').send(ADA);
    const first = await call();
    expect(first.status).to.equal(200);
    const again = await call();
    expect(again.status).to.equal(200);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await count('contacts')).to.equal(1);
  });

  it('costs nothing without the header, three statements with it, and three to replay', async () => {
    const { key } = await buildTenant();
    const onKeys = (queries: string[]) => queries.filter((sql) => /idempotency_keys/.test(sql)).length;
    const plain = await captureQueries(() => api(key).post('/contacts').send({ email: 'a@example.com' }).expect(201));
    expect(onKeys(plain.queries)).to.equal(0);
    const body = { email: 'b@example.com' };
    const keyed = await captureQueries(() => api(key).post('/contacts').set('Idempotency-Key', 'n').send(body).expect(201));
    // The purge, the claim, the stored answer.
    expect(onKeys(keyed.queries)).to.equal(3);
    const replay = await captureQueries(() => api(key).post('/contacts').set('Idempotency-Key', 'n').send(body).expect(201));
    // The purge, the clashing claim, the stale-claim delete, the read.
    expect(onKeys(replay.queries)).to.equal(4);
    expect(replay.queries.filter((sql) => /contacts/.test(sql) && !/idempotency_keys/.test(sql))).to.deep.equal([]);
  });
});
