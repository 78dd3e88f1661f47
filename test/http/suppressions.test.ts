import { expect } from 'chai';
import type { Response } from 'supertest';
import { select } from '../../src/db/sql/statements';
import { createMetrics } from '../../src/metrics/metrics';
import { withTransaction } from '../../src/db/sql/transaction';
import { addSuppressionList } from '../../src/services/suppressions/suppression-operations';
import { addSuppressions } from '../../src/services/suppressions/suppression-store';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { allEvents } from '../services/events/support';

// POST, GET and DELETE /api/v1/suppressions (docs/api.md "Suppressions", docs/channels.md
// "Suppressions"): what a client sends and gets back, and what is stored.

async function rowsOf(accountId: string) {
  return select<{ channel: string; address: string; reason: string; source: string | null }>(
    testDb(),
    'SELECT channel, address, reason, source FROM suppressions WHERE account_id = ? ORDER BY channel, address',
    [accountId],
  );
}

function expectValidationError(res: Response, ...paths: string[]) {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body).to.have.all.keys('error', 'code', 'details', 'requestId');
  expect(res.body.code).to.equal('validation_failed');
  expect(res.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(paths);
  expect(res.body.error.startsWith(`${paths[0]}: `), res.body.error).to.equal(true);
}

const NOT_FOUND = { error: 'Suppression not found', code: 'not_found' };

async function scrapedTotal(channel: string, reason: string): Promise<number> {
  const metric = await createMetrics(testDb()).registry.getSingleMetric('suppressions_total')!.get();
  return metric.values.find((value) => value.labels.channel === channel && value.labels.reason === reason)?.value ?? 0;
}

describe('POST /api/v1/suppressions', () => {
  it('answers 201 with the summary, stores the addresses normalized with the key as source, and records contact.suppressed', async () => {
    const { key, keyId, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'Ada@Example.com' });
    await addSuppressionList(testDb(), { accountId, suppressions: [{ channel: 'email', address: 'old@example.com', reason: 'hard_bounce' }], source: 'cli' });
    const res = await api(key)
      .post('/suppressions')
      .send({
        suppressions: [
          { channel: 'email', address: '  ADA@example.com ' },
          { channel: 'whatsapp', address: '+49 151 1285 5001', reason: 'opt_out' },
          { channel: 'email', address: 'Old@Example.com', reason: 'manual' },
        ],
      });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.equal({ summary: { total: 3, added: 2, existing: 1 } });
    expect(await rowsOf(accountId)).to.deep.equal([
      { channel: 'email', address: 'ada@example.com', reason: 'manual', source: `api_key:${keyId}` },
      // The first reason and source stay.
      { channel: 'email', address: 'old@example.com', reason: 'hard_bounce', source: 'cli' },
      { channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out', source: `api_key:${keyId}` },
    ]);
    const events = (await allEvents(accountId)).filter((event) => event.type === 'contact.suppressed');
    expect(events).to.have.length(1);
    expect(events[0]!.data).to.deep.include({ contact: { id: contact.id, email: 'Ada@Example.com' } });
    expect((events[0]!.data as { suppression: unknown }).suppression).to.deep.include({ channel: 'email', address: 'ada@example.com', reason: 'manual', source: `api_key:${keyId}` });
  });

  it('counts suppressions_total{channel,reason} for each address added, not for those already there', async () => {
    const { key } = await buildTenant();
    const before = { complaint: await scrapedTotal('email', 'complaint'), optOut: await scrapedTotal('whatsapp', 'opt_out') };
    const body = { suppressions: [{ channel: 'email', address: 'counted@example.com', reason: 'complaint' }, { channel: 'whatsapp', address: '+447700900123', reason: 'opt_out' }] };
    expect((await api(key).post('/suppressions').send(body)).status).to.equal(201);
    expect((await api(key).post('/suppressions').send(body)).body.summary).to.deep.equal({ total: 2, added: 0, existing: 2 });
    expect(await scrapedTotal('email', 'complaint')).to.equal(before.complaint + 1);
    expect(await scrapedTotal('whatsapp', 'opt_out')).to.equal(before.optOut + 1);
  });

  it('counts suppressions_total for any writer of the list once committed, and nothing for a transaction rolled back', async () => {
    const { accountId } = await buildTenant();
    const before = await scrapedTotal('email', 'hard_bounce');
    const item = { channel: 'email' as const, address: 'writer@example.com', reason: 'hard_bounce' as const, source: 'message:m1' };
    const rolledBack = withTransaction(testDb(), async (t) => {
      await addSuppressions(testDb(), accountId, [item], { now: new Date() }, t);
      throw new Error('the writer failed after adding');
    });
    await rolledBack.then(() => expect.fail('rolled back'), () => undefined);
    expect(await scrapedTotal('email', 'hard_bounce')).to.equal(before);
    expect(await rowsOf(accountId)).to.deep.equal([]);
    await withTransaction(testDb(), (t) => addSuppressions(testDb(), accountId, [item], { now: new Date() }, t));
    expect(await scrapedTotal('email', 'hard_bounce')).to.equal(before + 1);
  });

  it('counts an address given twice in one request once, the second as existing', async () => {
    const { key, accountId } = await buildTenant();
    const res = await api(key).post('/suppressions').send({ suppressions: [{ channel: 'email', address: 'twice@example.com' }, { channel: 'email', address: 'TWICE@example.com' }] });
    expect(res.body).to.deep.equal({ summary: { total: 2, added: 1, existing: 1 } });
    expect(await rowsOf(accountId)).to.have.length(1);
  });

  it('adds each address once when requests with the same addresses, in any order, arrive together', async () => {
    const { key, accountId } = await buildTenant();
    const addresses = Array.from({ length: 50 }, (_, i) => `same-${i}@example.com`);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, n) => {
        const order = n % 2 === 0 ? addresses : [...addresses].reverse();
        return api(key).post('/suppressions').send({ suppressions: order.map((address) => ({ channel: 'email', address })) });
      }),
    );
    expect(answers.map((res) => res.status)).to.deep.equal(Array(8).fill(201));
    expect(answers.reduce((sum, res) => sum + res.body.summary.added, 0)).to.equal(50);
    expect(await rowsOf(accountId)).to.have.length(50);
  });

  it('answers 400 naming each field it does not know, as every body of the API does, and adds nothing', async () => {
    const { key, accountId } = await buildTenant();
    const res = await api(key).post('/suppressions').send({ suppressions: [{ channel: 'email', address: 'extra@example.com', contactId: 'x' }], note: 'hi' });
    expect(res.status).to.equal(400);
    expect(res.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(['suppressions.0.contactId', 'note']);
    expect(await rowsOf(accountId)).to.deep.equal([]);
  });

  it('takes 1,000 items in one request', async () => {
    const { key, accountId } = await buildTenant();
    const suppressions = Array.from({ length: 1000 }, (_, i) => ({ channel: 'email', address: `bulk-${i}@example.com` }));
    const res = await api(key).post('/suppressions').send({ suppressions });
    expect(res.status).to.equal(201);
    expect(res.body.summary).to.deep.equal({ total: 1000, added: 1000, existing: 0 });
    expect(await rowsOf(accountId)).to.have.length(1000);
  });

  it('answers 400 naming each bad address (suppressions.N.address) and writes nothing, not even the good items', async () => {
    const { key, accountId } = await buildTenant();
    const res = await api(key)
      .post('/suppressions')
      .send({
        suppressions: [
          { channel: 'email', address: 'fine@example.com' },
          { channel: 'email', address: 'not-an-address' },
          { channel: 'whatsapp', address: '015112855001' },
          { channel: 'whatsapp', address: 'ada@example.com' },
        ],
      });
    expectValidationError(res, 'suppressions.1.address', 'suppressions.2.address', 'suppressions.3.address');
    expect(res.body.details[1].message).to.contain('international');
    expect(await rowsOf(accountId)).to.deep.equal([]);
  });

  for (const [name, item, path] of [
    ['an unknown channel', { channel: 'sms', address: 'ada@example.com' }, 'suppressions.0.channel'],
    ['an unknown reason', { channel: 'email', address: 'ada@example.com', reason: 'bored' }, 'suppressions.0.reason'],
    ['no address', { channel: 'email' }, 'suppressions.0.address'],
    ['an address that is not a string', { channel: 'email', address: 42 }, 'suppressions.0.address'],
    ['an address too long', { channel: 'email', address: `${'a'.repeat(320)}@example.com` }, 'suppressions.0.address'],
  ] as const) {
    it(`answers 400 naming the field for ${name}, writing nothing`, async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/suppressions').send({ suppressions: [item] });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.details[0].path).to.equal(path);
      expect(await rowsOf(accountId)).to.deep.equal([]);
    });
  }

  for (const [name, body] of [
    ['no items', { suppressions: [] }],
    ['more than 1,000 items', { suppressions: Array.from({ length: 1001 }, (_, i) => ({ channel: 'email', address: `x${i}@example.com` })) }],
    ['no list', {}],
    ['a list that is not an array', { suppressions: { channel: 'email', address: 'ada@example.com' } }],
  ] as const) {
    it(`answers 400 naming suppressions for ${name}`, async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/suppressions').send(body);
      expectValidationError(res, 'suppressions');
      expect(await rowsOf(accountId)).to.deep.equal([]);
    });
  }

  it('answers 401 without a key', async () => {
    const res = await api().post('/suppressions').send({ suppressions: [{ channel: 'email', address: 'ada@example.com' }] });
    expect(res.status).to.equal(401);
  });
});

describe('GET /api/v1/suppressions', () => {
  async function listed(accountId: string) {
    const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 9, minute));
    const add = (minute: number, channel: 'email' | 'whatsapp', address: string, reason: 'manual' | 'hard_bounce' | 'opt_out' = 'manual') =>
      addSuppressionList(testDb(), { accountId, suppressions: [{ channel, address, reason }], source: 'cli', now: at(minute) });
    await add(1, 'email', 'first@example.com', 'hard_bounce');
    await add(2, 'whatsapp', '+4915112855001', 'opt_out');
    await add(3, 'email', 'third@example.com');
    await add(4, 'email', 'fourth@example.com', 'hard_bounce');
  }

  it('lists newest first, with each field, and walks the pages with nextCursor', async () => {
    const { key, accountId } = await buildTenant();
    await listed(accountId);
    const other = await buildTenant();
    await addSuppressionList(testDb(), { accountId: other.accountId, suppressions: [{ channel: 'email', address: 'theirs@example.com' }], source: 'cli' });
    const all = await api(key).get('/suppressions');
    expect(all.status).to.equal(200);
    expect(all.body.nextCursor).to.equal(null);
    expect(all.body.suppressions.map((s: { address: string }) => s.address)).to.deep.equal(['fourth@example.com', 'third@example.com', '+4915112855001', 'first@example.com']);
    expect(all.body.suppressions[0]).to.deep.equal({ channel: 'email', address: 'fourth@example.com', reason: 'hard_bounce', source: 'cli', createdAt: '2026-12-01T09:04:00.000Z' });

    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api(key).get('/suppressions').query({ limit: 3, ...(cursor && { cursor }) });
      expect(page.status).to.equal(200);
      walked.push(...page.body.suppressions.map((s: { address: string }) => s.address));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(walked).to.deep.equal(all.body.suppressions.map((s: { address: string }) => s.address));
  });

  it('filters by channel, by reason, and by one address normalized as stored', async () => {
    const { key, accountId } = await buildTenant();
    await listed(accountId);
    const addresses = async (query: Record<string, string>) => {
      const res = await api(key).get('/suppressions').query(query);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.suppressions.map((s: { address: string }) => s.address);
    };
    expect(await addresses({ channel: 'whatsapp' })).to.deep.equal(['+4915112855001']);
    expect(await addresses({ reason: 'hard_bounce' })).to.deep.equal(['fourth@example.com', 'first@example.com']);
    expect(await addresses({ channel: 'email', reason: 'manual' })).to.deep.equal(['third@example.com']);
    expect(await addresses({ address: 'THIRD@example.com' })).to.deep.equal(['third@example.com']);
    expect(await addresses({ address: '+49 151 1285 5001' })).to.deep.equal(['+4915112855001']);
    expect(await addresses({ address: 'nobody@example.com' })).to.deep.equal([]);
  });

  for (const [name, query, path] of [
    ['an unknown channel', { channel: 'sms' }, 'channel'],
    ['an unknown reason', { reason: 'bored' }, 'reason'],
    ['a limit out of range', { limit: '0' }, 'limit'],
    ['a cursor it did not issue', { cursor: 'bm90LWEtY3Vyc29y' }, 'cursor'],
    ['an address that is neither an email nor an international number', { address: 'ada' }, 'address'],
    ['a phone number on the email channel', { address: '+4915112855001', channel: 'email' }, 'address'],
    ['a field it does not know', { contact: 'x' }, 'contact'],
  ] as const) {
    it(`answers 400 naming ${path || 'the input'} for ${name}`, async () => {
      const { key } = await buildTenant();
      const res = await api(key).get('/suppressions').query(query);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.details[0].path).to.equal(path);
    });
  }

  it('answers 400 for a cursor of another filter', async () => {
    const { key, accountId } = await buildTenant();
    await listed(accountId);
    const page = await api(key).get('/suppressions').query({ limit: 1, channel: 'email' });
    const res = await api(key).get('/suppressions').query({ limit: 1, channel: 'whatsapp', cursor: page.body.nextCursor });
    expectValidationError(res, 'cursor');
  });
});

describe('GET and DELETE /api/v1/suppressions/{channel}/{address}', () => {
  it('answers the suppression for a percent-encoded email or number, in any writing', async () => {
    const { key, accountId } = await buildTenant();
    await addSuppressionList(testDb(), { accountId, suppressions: [{ channel: 'email', address: 'ada+news@example.com', reason: 'complaint' }], source: 'cli', now: new Date('2026-12-01T10:00:00.000Z') });
    await addSuppressionList(testDb(), { accountId, suppressions: [{ channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out' }], source: 'cli' });
    for (const path of ['/suppressions/email/ada%2Bnews%40example.com', '/suppressions/email/Ada+News@Example.com', '/suppressions/email/ada%2Bnews@example.com']) {
      const res = await api(key).get(path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect(res.body).to.deep.equal({ suppression: { channel: 'email', address: 'ada+news@example.com', reason: 'complaint', source: 'cli', createdAt: '2026-12-01T10:00:00.000Z' } });
    }
    for (const path of ['/suppressions/whatsapp/%2B4915112855001', '/suppressions/whatsapp/+4915112855001', '/suppressions/whatsapp/004915112855001']) {
      const res = await api(key).get(path);
      expect(res.status, path).to.equal(200);
      expect(res.body.suppression).to.deep.include({ channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out' });
    }
  });

  it('answers 404 for an address not on the list, on another channel, or on another account\'s', async () => {
    const { key } = await buildTenant();
    const other = await buildTenant();
    await addSuppressionList(testDb(), { accountId: other.accountId, suppressions: [{ channel: 'email', address: 'theirs@example.com' }], source: 'cli' });
    for (const path of ['/suppressions/email/nobody%40example.com', '/suppressions/email/theirs%40example.com']) {
      const res = await api(key).get(path);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include(NOT_FOUND);
    }
    expect((await api(other.key).get('/suppressions/email/theirs%40example.com')).status).to.equal(200);
    expect((await api(key).delete('/suppressions/email/theirs%40example.com')).status).to.equal(404);
    expect((await api(other.key).get('/suppressions/email/theirs%40example.com')).status).to.equal(200);
  });

  for (const method of ['get', 'delete'] as const) {
    it(`${method.toUpperCase()} answers 400 naming channel for an unknown channel, and address for one that is not of the channel`, async () => {
      const { key } = await buildTenant();
      expectValidationError(await api(key)[method]('/suppressions/sms/ada%40example.com'), 'channel');
      expectValidationError(await api(key)[method]('/suppressions/email/not-an-address'), 'address');
      expectValidationError(await api(key)[method]('/suppressions/whatsapp/015112855001'), 'address');
      expect((await api()[method]('/suppressions/email/ada%40example.com')).status).to.equal(401);
    });
  }

  it('DELETE answers 204 with no body, lifts the suppression, records contact.unsuppressed; again it is a 404', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'ada@example.com' });
    await addSuppressionList(testDb(), { accountId, suppressions: [{ channel: 'email', address: 'ada@example.com' }], source: 'cli' });
    const res = await api(key).delete('/suppressions/email/Ada%40Example.com');
    expect(res.status).to.equal(204);
    expect(res.text).to.equal('');
    expect(res.headers['content-type']).to.equal(undefined);
    expect(await rowsOf(accountId)).to.deep.equal([]);
    const events = (await allEvents(accountId)).filter((event) => event.type === 'contact.unsuppressed');
    expect(events.map((event) => (event.data as { contact: { id: string } }).contact.id)).to.deep.equal([contact.id]);
    const again = await api(key).delete('/suppressions/email/ada%40example.com');
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.include(NOT_FOUND);
    expect((await api(key).get('/suppressions/email/ada%40example.com')).status).to.equal(404);
  });
});
