import { expect } from 'chai';
import request, { type Response } from 'supertest';
import { api, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { countRows } from '../support/sequence-rows';

// Input the service must refuse, or accept exactly, before anything reaches the database
// (docs/decisions.md "Contacts", "Errors"): text that neither SQLite nor utf8mb4 can hold as given,
// runaway nesting, addresses as SMTP takes them, tag counts after duplicates collapse, and
// request bodies that are not JSON objects. Run on SQLite and on MariaDB alike.

const NOT_STORABLE = 'Must not contain NUL characters or unpaired UTF-16 surrogates';
const NUL = '\u0000';
const LONE_SURROGATE = '\ud800';

// `{ error, details }` naming exactly one problem at `path`.
function expectRejected(res: Response, path: string, message: string) {
  expect(res.status, res.text).to.equal(400);
  expect(res.body).to.deep.include({ error: `${path}: ${message}`, details: [{ path, message }] });
}

// customFields of `levels` nested objects: { a: { a: ... { a: 'leaf' } } }.
function nested(levels: number): Record<string, unknown> {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value as Record<string, unknown>;
}

function range(count: number, make: (i: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => make(i));
}

describe('Input hardening (REST)', () => {
  describe('text that cannot be stored as given', () => {
    const CASES: Array<[string, Record<string, unknown>, string, string]> = [
      ['a NUL in firstName', { firstName: `Ada${NUL}` }, 'firstName', NOT_STORABLE],
      ['a NUL in phone', { phone: `+44${NUL}7700900123` }, 'phone', NOT_STORABLE],
      ['a NUL in a tag', { tags: ['vip', `news${NUL}letter`] }, 'tags.1', NOT_STORABLE],
      ['a NUL in a customFields value', { customFields: { plan: 'pro', note: { lines: ['ok', `x${NUL}y`] } } }, 'customFields.note.lines.1', NOT_STORABLE],
      ['a NUL in a customFields key', { customFields: { plan: 'pro', [`bad${NUL}key`]: 1 } }, `customFields.bad${NUL}key`, `Key: ${NOT_STORABLE}`],
      ['a lone surrogate in lastName', { lastName: `Lovelace${LONE_SURROGATE}` }, 'lastName', NOT_STORABLE],
      ['a lone surrogate in a tag', { tags: [`${LONE_SURROGATE}vip`] }, 'tags.0', NOT_STORABLE],
    ];

    for (const [name, fields, path, message] of CASES) {
      it(`answers 400 naming ${path.replace(NUL, '\\u0000')} for ${name}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await api(key).post('/contacts').send({ email: 'ada@example.com', ...fields });
        expectRejected(res, path, message);
        expect(await countRows('contacts', accountId)).to.equal(0);
      });
    }

    it('accepts a properly paired surrogate (an emoji) and reads it back unchanged', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'emoji@example.com', firstName: 'Ada 😀', tags: ['🚀'] });
      expect(res.status, res.text).to.equal(201);
      const { body } = await api(key).get(`/contacts/${res.body.contact.id}`);
      expect(body.contact).to.deep.include({ firstName: 'Ada 😀', tags: ['🚀'] });
    });

    it('answers 400 naming contacts.N when one batch item carries a NUL, and writes no item', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key)
        .post('/contacts/batch')
        .send({ contacts: [{ email: 'first@example.com' }, { email: 'second@example.com' }, { email: 'third@example.com', customFields: { note: `a${NUL}` } }] });
      expectRejected(res, 'contacts.2.customFields.note', NOT_STORABLE);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('answers 400 naming contacts.N when one batch item carries a lone surrogate, and writes no item', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key)
        .post('/contacts/batch')
        .send({ contacts: [{ email: 'first@example.com', tags: ['ok'] }, { email: 'second@example.com', lastName: `x${LONE_SURROGATE}` }] });
      expectRejected(res, 'contacts.1.lastName', NOT_STORABLE);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it("answers 400 naming contact.firstName when a trigger's contact carries a NUL: no contact, no run", async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const res = await api(key)
        .post(`/sequences/${sequence.id}/trigger`)
        .send({ contact: { email: 'ada@example.com', firstName: `Ada${NUL}` } });
      expectRejected(res, 'contact.firstName', NOT_STORABLE);
      expect(await countRows('contacts', accountId)).to.equal(0);
      expect(await countRows('sequence_runs', accountId)).to.equal(0);
    });

    it("answers 400 naming contact.tags.0 when a trigger's contact carries a lone surrogate: no contact, no run", async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const res = await api(key)
        .post(`/sequences/${sequence.id}/trigger`)
        .send({ contact: { email: 'ada@example.com', tags: [LONE_SURROGATE] } });
      expectRejected(res, 'contact.tags.0', NOT_STORABLE);
      expect(await countRows('contacts', accountId)).to.equal(0);
      expect(await countRows('sequence_runs', accountId)).to.equal(0);
    });
  });

  describe('customFields nesting', () => {
    it('accepts 16 levels of nesting and reads them back equal', async () => {
      const { key } = await buildTenant();
      const customFields = nested(16);
      const res = await api(key).post('/contacts').send({ email: 'deep@example.com', customFields });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.contact.customFields).to.deep.equal(customFields);
      const { status, body } = await api(key).get(`/contacts/${res.body.contact.id}`);
      expect(status).to.equal(200);
      expect(body.contact.customFields).to.deep.equal(customFields);
    });

    it('answers 400 "Nested deeper than 16 levels" at the 17th level, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'deep@example.com', customFields: nested(17) });
      // The first object past the limit: customFields.a × 16.
      expectRejected(res, `customFields${'.a'.repeat(16)}`, 'Nested deeper than 16 levels');
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('answers 400, not 500, to 100000 levels of nesting in a body under 1 MiB', async () => {
      const { key, accountId } = await buildTenant();
      const levels = 100_000;
      const body = `{"email":"deep@example.com","customFields":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
      expect(Buffer.byteLength(body)).to.be.below(1024 * 1024);
      const res = await api(key).post('/contacts').set('Content-Type', 'application/json').send(body);
      // Refused before anything serialises the parsed body recursively (a stack overflow, 500).
      expect(res.status, res.text).to.equal(400);
      expect(res.body).to.deep.include({ error: 'Request body is nested deeper than 32 levels' });
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('refuses a body nested deeper than 32 levels even in a field it would ignore, on both transports', async () => {
      const { key, accountId } = await buildTenant();
      const deep = `${'['.repeat(33)}${']'.repeat(33)}`;
      // updatedAt: a read-only field a contact body accepts and ignores.
      const body = `{"email":"deep@example.com","updatedAt":${deep}}`;
      const rest = await api(key).post('/contacts').set('Content-Type', 'application/json').send(body);
      expect(rest.status).to.equal(400);
      expect(rest.body).to.deep.include({ error: 'Request body is nested deeper than 32 levels' });
      const trpc = await request(testApp())
        .post('/trpc/contacts.create')
        .set('x-api-key', key)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(trpc.status).to.equal(400);
      expect(trpc.body.error.message).to.equal('Request body is nested deeper than 32 levels');
      expect(await countRows('contacts', accountId)).to.equal(0);
      const shallower = `{"email":"deep@example.com","updatedAt":${'['.repeat(31)}${']'.repeat(31)}}`;
      expect((await api(key).post('/contacts').set('Content-Type', 'application/json').send(shallower)).status).to.equal(201);
    });
  });

  describe('email addresses', () => {
    const ACCEPTED = [
      'user&x@example.com',
      "o'brien+news@example.co.uk",
      'user/x@example.com',
      'jörg@exämple.de',
      'x@xn--80ak6aa92e.xn--p1ai',
    ];
    for (const email of ACCEPTED) {
      it(`accepts ${email}, stored and returned as given`, async () => {
        const { key } = await buildTenant();
        const res = await api(key).post('/contacts').send({ email });
        expect(res.status, res.text).to.equal(201);
        expect(res.body.contact.email).to.equal(email);
        const found = await api(key).get(`/contacts/by-email/${encodeURIComponent(email)}`);
        expect(found.status).to.equal(200);
        expect(found.body.contact.id).to.equal(res.body.contact.id);
      });
    }

    const REJECTED = ['a..b@example.com', '.a@example.com', 'a@example', '"quoted"@example.com', 'a@[1.2.3.4]', 'a b@example.com'];
    for (const email of REJECTED) {
      it(`answers 400 "email: Invalid email address" to ${email}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        expectRejected(await api(key).post('/contacts').send({ email }), 'email', 'Invalid email address');
        expect(await countRows('contacts', accountId)).to.equal(0);
      });
    }

    it('treats a decomposed and a composed é as one address: 409 on the second create, found by either', async () => {
      const { key, accountId } = await buildTenant();
      const decomposed = 'jose\u0301@example.com';
      const composed = 'jos\u00e9@example.com';
      const first = await api(key).post('/contacts').send({ email: decomposed });
      expect(first.status, first.text).to.equal(201);
      expect(first.body.contact.email).to.equal(decomposed);

      const second = await api(key).post('/contacts').send({ email: composed });
      expect(second.status, second.text).to.equal(409);
      expect(second.body).to.deep.include({ error: 'A contact with this email already exists' });
      expect(await countRows('contacts', accountId)).to.equal(1);

      for (const form of [composed, decomposed]) {
        const res = await api(key).get(`/contacts/by-email/${encodeURIComponent(form)}`);
        expect(res.status, form).to.equal(200);
        expect(res.body.contact.id).to.equal(first.body.contact.id);
      }
    });

    it('answers 400 to an address of 254 characters whose lower-cased form is longer than 254', async () => {
      const { key, accountId } = await buildTenant();
      // İ lower-cases to two UTF-16 units (i + combining dot): 10 of them add 10 characters.
      const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(48)}.io`;
      const dotted = `${'İ'.repeat(10)}@${domain}`;
      expect(dotted).to.have.length(254);
      expect(dotted.toLowerCase().length).to.be.above(254);

      expectRejected(await api(key).post('/contacts').send({ email: dotted }), 'email', 'Email must be at most 254 characters');
      expect(await countRows('contacts', accountId)).to.equal(0);

      // The same length with a plain I fits, so the lower-casing is what broke the limit.
      const plain = await api(key).post('/contacts').send({ email: `${'I'.repeat(10)}@${domain}` });
      expect(plain.status, plain.text).to.equal(201);
    });
  });

  describe('tag counts', () => {
    it('accepts 101 copies of one tag: 201 with that tag once', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'tags@example.com', tags: Array(101).fill('vip') });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.contact.tags).to.deep.equal(['vip']);
      const { body } = await api(key).get(`/contacts/${res.body.contact.id}`);
      expect(body.contact.tags).to.deep.equal(['vip']);
    });

    it('answers 400 "A contact can have at most 100 tags" to 101 distinct tags, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'tags@example.com', tags: range(101, (i) => `t${i}`) });
      expectRejected(res, 'tags', 'A contact can have at most 100 tags');
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('answers 400 to 1001 tags in one request even when they collapse to one, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'tags@example.com', tags: Array(1001).fill('vip') });
      expectRejected(res, 'tags', 'At most 1000 tags in one request');
      expect(await countRows('contacts', accountId)).to.equal(0);
    });
  });

  describe('request bodies and paths', () => {
    it('answers 404 "Contact not found", not 500, to get-by-email of an address ending in %00', async () => {
      const { key } = await buildTenant();
      await api(key).post('/contacts').send({ email: 'ada@example.com' }).expect(201);
      const res = await api(key).get('/contacts/by-email/ada%40example.com%00');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include({ error: 'Contact not found' });
    });

    it('accepts Content-Type "Application/JSON" (media types are case-insensitive)', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key)
        .post('/contacts')
        .set('Content-Type', 'Application/JSON')
        .send(JSON.stringify({ email: 'case@example.com', firstName: 'Ada' }));
      expect(res.status, res.text).to.equal(201);
      expect(res.body.contact).to.include({ email: 'case@example.com', firstName: 'Ada' });
      expect(await countRows('contacts', accountId)).to.equal(1);
    });

    for (const raw of ['null', '5', '"x"', '[]']) {
      it(`answers 400 "Request body must be a JSON object" to the JSON body ${raw}`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await api(key).post('/contacts').set('Content-Type', 'application/json').send(raw);
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.include({ error: 'Request body must be a JSON object' });
        expect(await countRows('contacts', accountId)).to.equal(0);
      });
    }

    it('answers 400 "Malformed JSON body" to a body cut short', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').set('Content-Type', 'application/json').send('{"email":');
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include({ error: 'Malformed JSON body' });
    });

    it('drops a top-level "__proto__" custom field, keeps the others, and pollutes no prototype', async () => {
      const { key, accountId } = await buildTenant();
      const raw = '{"email":"proto@example.com","customFields":{"__proto__":{"polluted":true},"plan":"pro","n":1}}';
      const res = await api(key).post('/contacts').set('Content-Type', 'application/json').send(raw);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.contact.customFields).to.deep.equal({ plan: 'pro', n: 1 });
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);

      const { body } = await api(key).get(`/contacts/${res.body.contact.id}`);
      expect(body.contact.customFields).to.deep.equal({ plan: 'pro', n: 1 });
      expect(await storedCustomFields(accountId)).to.deep.equal(['{"plan":"pro","n":1}']);
    });
  });
});

// customFields as the contacts table holds them (JSON text).
async function storedCustomFields(accountId: string): Promise<string[]> {
  const rows = (await testDb().sequelize.query('SELECT custom_fields FROM contacts WHERE account_id = ?', {
    replacements: [accountId],
    type: 'SELECT',
  })) as Array<{ custom_fields: unknown }>;
  return rows.map((row) => (typeof row.custom_fields === 'string' ? row.custom_fields : JSON.stringify(row.custom_fields)));
}
