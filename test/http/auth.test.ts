import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { toDate } from '../../src/db/sql/rows';
import { select } from '../../src/db/sql/statements';
import { setApiKeyActive } from '../../src/services/api-keys';
import { api, caller, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildAccount, buildApiKey, buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// docs/api.md "Authentication" and docs/decisions.md "Accounts, keys and sequences": the x-api-key check, the
// same on REST, on the tRPC endpoint and through createCaller.

const MISSING = 'Missing x-api-key header';
const INVALID = 'Invalid API key';
const INACTIVE = 'API key is inactive';
const EXPIRED = 'API key has expired';

const hex = (length: number) => randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);

// Well-formed keys that no database holds, and keys that are not of the format at all.
const MALFORMED_KEYS: Record<string, () => string> = {
  'a wrong prefix': () => `sk_${hex(40)}`,
  'a prefix without the underscore': () => `svc${hex(40)}`,
  '39 hex characters': () => `svc_${hex(39)}`,
  '41 hex characters': () => `svc_${hex(41)}`,
  'upper-case hex': () => `svc_${hex(40).toUpperCase().replace(/^[0-9]/, 'A')}`,
  'non-hex characters': () => `svc_${'g'.repeat(40)}`,
};

async function disabledKey() {
  const { account } = await buildTenant();
  return (await buildApiKey(account.id, { active: false })).key;
}

async function expiredKey() {
  const account = await buildAccount();
  return (await buildApiKey(account.id, { expiresAt: new Date(Date.now() - 1_000) })).key;
}

function trpcCreate(key: string | undefined, body: unknown = { email: 'ada@example.com' }) {
  const test = request(testApp()).post('/trpc/contacts.create');
  return (key ? test.set('x-api-key', key) : test).send(body as object);
}

async function contactCount(): Promise<number> {
  const [{ count }] = await select<{ count: number | string }>(testDb(), 'SELECT COUNT(*) AS count FROM contacts', []);
  return Number(count);
}

describe('API key authentication', () => {
  describe('over REST', () => {
    it('answers 401 "Missing x-api-key header" when the header is absent', async () => {
      const res = await api().post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
      expect(res.headers['content-type']).to.match(/^application\/json/);
    });

    it('answers 401 "Invalid API key" for a well-formed key that does not exist', async () => {
      await buildTenant();
      const res = await api(`svc_${hex(40)}`).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: INVALID });
    });

    for (const [description, makeKey] of Object.entries(MALFORMED_KEYS)) {
      it(`answers 401 "Invalid API key" for a key with ${description}`, async () => {
        const res = await api(makeKey()).get(`/contacts/${randomUUID()}`);
        expect(res.status).to.equal(401);
        expect(res.body).to.deep.include({ error: INVALID });
      });
    }

    it('rejects the upper-case spelling of an existing key as invalid', async () => {
      const { key } = await buildTenant();
      const res = await api(`svc_${key.slice(4).toUpperCase()}`).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: INVALID });
    });

    it('answers 401 "API key is inactive" for a disabled key', async () => {
      const res = await api(await disabledKey()).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: INACTIVE });
    });

    it('answers 401 "API key has expired" for a key whose expiry has passed', async () => {
      const res = await api(await expiredKey()).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: EXPIRED });
    });

    it('accepts a key whose expiry is in the future', async () => {
      const account = await buildAccount();
      const { key } = await buildApiKey(account.id, { expiresAt: new Date(Date.now() + 60 * 60_000) });
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(201);
      expect(res.body.contact.email).to.equal('ada@example.com');
    });

    it('accepts a key again once it is re-enabled after being disabled', async () => {
      const { key, keyId } = await buildTenant();
      await setApiKeyActive(testDb(), { id: keyId, active: false });
      expect((await api(key).post('/contacts').send({ email: 'ada@example.com' })).body).to.deep.include({ error: INACTIVE });

      await setApiKeyActive(testDb(), { id: keyId, active: true });
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(201);
    });

    it('writes nothing when authentication fails', async () => {
      await api(await disabledKey()).post('/contacts').send({ email: 'ada@example.com' });
      await api().post('/contacts').send({ email: 'bob@example.com' });
      expect(await contactCount()).to.equal(0);
    });

    it('answers 401 rather than 400 when the key is missing and the JSON body is malformed', async () => {
      const res = await api().post('/contacts').set('content-type', 'application/json').send('{"email": ');
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
    });

    it('answers 401 rather than 413 when the key is missing and the body is over 1 MiB', async () => {
      const body = JSON.stringify({ email: 'ada@example.com', customFields: { blob: 'x'.repeat(1024 * 1024) } });
      const res = await api().post('/contacts').set('content-type', 'application/json').send(body);
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
    });

    it('answers 401 rather than 400 when the key is missing and the body fails validation', async () => {
      const res = await api().post('/contacts').send({ email: 'not an email' });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
    });

    it('answers 401 rather than 404 when the key is missing and the contact does not exist', async () => {
      const res = await api().get(`/contacts/${randomUUID()}`);
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
    });

    it('answers 401 rather than 404 when the key is missing on an unknown route under /api/v1', async () => {
      const res = await api().get('/no-such-resource');
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: MISSING });
    });

    it('answers 401 rather than 404 when the key is invalid on an unknown route under /api/v1', async () => {
      const res = await api(`svc_${hex(40)}`).delete('/no-such-resource/1');
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: INVALID });
    });
  });

  describe('over the tRPC endpoint', () => {
    const cases: Array<[string, () => Promise<string | undefined>, string]> = [
      ['the header is absent', async () => undefined, MISSING],
      ['the key does not exist', async () => `svc_${hex(40)}`, INVALID],
      ['the key is malformed', async () => `svc_${hex(39)}`, INVALID],
      ['the key is disabled', disabledKey, INACTIVE],
      ['the key has expired', expiredKey, EXPIRED],
    ];
    for (const [situation, makeKey, message] of cases) {
      it(`answers 401 UNAUTHORIZED "${message}" in tRPC's error shape when ${situation}`, async () => {
        const res = await trpcCreate(await makeKey());
        expect(res.status).to.equal(401);
        expect(res.body.error.message).to.equal(message);
        expect(res.body.error.data.code).to.equal('UNAUTHORIZED');
        expect(res.body.error.data.httpStatus).to.equal(401);
        expect(res.body.error.data.path).to.equal('contacts.create');
        expect(res.body.error.data).to.not.have.property('stack');
      });
    }

    it('accepts a valid key', async () => {
      const { key } = await buildTenant();
      const res = await trpcCreate(key);
      expect(res.status).to.equal(200);
      expect(res.body.result.data.contact.email).to.equal('ada@example.com');
    });

    it('answers 401 rather than 400 when the key is missing and the JSON body is malformed', async () => {
      const res = await request(testApp())
        .post('/trpc/contacts.create')
        .set('content-type', 'application/json')
        .send('{"email": ');
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.equal(MISSING);
      expect(res.body.error.data.code).to.equal('UNAUTHORIZED');
    });

    it('answers 401 rather than 400 when the key is invalid and the JSON body is malformed', async () => {
      const res = await request(testApp())
        .post('/trpc/contacts.create')
        .set('x-api-key', `svc_${hex(40)}`)
        .set('content-type', 'application/json')
        .send('{"email": ');
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.equal(INVALID);
      expect(res.body.error.data.code).to.equal('UNAUTHORIZED');
    });

    it('answers 401 rather than 413 when the key is missing and the body is over 1 MiB', async () => {
      const res = await request(testApp())
        .post('/trpc/contacts.create')
        .set('content-type', 'application/json')
        .send(JSON.stringify({ email: 'ada@example.com', customFields: { blob: 'x'.repeat(1024 * 1024) } }));
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.equal(MISSING);
    });

    it('answers 401 rather than 400 when the key is missing and the input fails validation', async () => {
      const res = await trpcCreate(undefined, { email: 'not an email' });
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.equal(MISSING);
    });

    it('answers 401 rather than 404 when the key is missing and the contact does not exist', async () => {
      const input = encodeURIComponent(JSON.stringify({ id: randomUUID() }));
      const res = await request(testApp()).get(`/trpc/contacts.get?input=${input}`);
      expect(res.status).to.equal(401);
      expect(res.body.error.message).to.equal(MISSING);
      expect(res.body.error.data.code).to.equal('UNAUTHORIZED');
    });
  });

  describe('through createCaller', () => {
    const cases: Array<[string, () => Promise<string | undefined>, string]> = [
      ['no key is given', async () => undefined, MISSING],
      ['the key does not exist', async () => `svc_${hex(40)}`, INVALID],
      ['the key has a wrong prefix', async () => `key_${hex(40)}`, INVALID],
      ['the key is disabled', disabledKey, INACTIVE],
      ['the key has expired', expiredKey, EXPIRED],
    ];
    for (const [situation, makeKey, message] of cases) {
      it(`rejects with UNAUTHORIZED "${message}" when ${situation}`, async () => {
        const error = await trpcRejection(caller(await makeKey()).contacts.create({ email: 'ada@example.com' }));
        expect(error.code).to.equal('UNAUTHORIZED');
        expect(error.message).to.equal(message);
      });
    }

    it('checks the key before validating the input', async () => {
      const error = await trpcRejection(caller().contacts.create({ email: 'not an email' }));
      expect(error.code).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal(MISSING);
    });

    it('checks the key before looking the contact up', async () => {
      const error = await trpcRejection(caller(await disabledKey()).contacts.get({ id: randomUUID() }));
      expect(error.code).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal(INACTIVE);
    });

    it('serves a call made with a valid key', async () => {
      const { key } = await buildTenant();
      const { contact } = await caller(key).contacts.create({ email: 'ada@example.com' });
      expect(contact.email).to.equal('ada@example.com');
    });
  });

  describe('key storage', () => {
    interface KeyRow extends Record<string, unknown> {
      key_hash: string;
      key_prefix: string;
      last_used_at: unknown;
    }

    it('stores only the SHA-256 of the key and its first 8 characters', async () => {
      const account = await buildAccount();
      const created = await buildApiKey(account.id);
      const rows = await select<KeyRow>(testDb(), 'SELECT * FROM api_keys WHERE id = ?', [created.id]);
      expect(rows).to.have.length(1);
      const [row] = rows;

      expect(row.key_hash).to.equal(createHash('sha256').update(created.key).digest('hex'));
      expect(row.key_prefix).to.equal(created.key.slice(0, 8));
      expect(row.key_prefix).to.match(/^svc_[0-9a-f]{4}$/);
      const secret = created.key.slice(4);
      for (const [column, value] of Object.entries(row)) {
        expect(String(value), `column ${column}`).to.not.include(secret);
        expect(String(value), `column ${column}`).to.not.include(created.key);
      }
    });

    it('records when a key was last used', async () => {
      const { key, keyId } = await buildTenant();
      const before = Date.now();
      const lastUsed = async () =>
        (await select<KeyRow>(testDb(), 'SELECT last_used_at FROM api_keys WHERE id = ?', [keyId]))[0].last_used_at;
      expect(await lastUsed()).to.equal(null);

      const res = await api(key).get(`/contacts/${randomUUID()}`);
      expect(res.status).to.equal(404);

      // Written after the answer, not before it: wait for it briefly.
      let value: unknown = null;
      for (let attempt = 0; attempt < 50 && value === null; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        value = await lastUsed();
      }
      expect(value, 'last_used_at').to.not.equal(null);
      expect(toDate(value).getTime()).to.be.within(before - 1_000, Date.now() + 1_000);
    });
  });
});
