import { expect } from 'chai';
import type { Response } from 'supertest';
import { enrollContact } from '../../src/services/sequences/enroll-contact';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';

// The Contacts REST surface (docs/api.md "Contacts", docs/decisions.md "Contacts", "Batch and bulk", "Errors"):
// paths, statuses, bodies, and what the database holds afterwards.

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Contact not found', code: 'not_found' };
const EMAIL_TAKEN = { error: 'A contact with this email already exists', code: 'contact_exists' };
const CONTACT_FIELDS = [
  'id',
  'email',
  'phone',
  'firstName',
  'lastName',
  'tags',
  'customFields',
  'emailSubscriptionStatus',
  'whatsappSubscriptionStatus',
  'createdAt',
  'updatedAt',
];

type Contact = Record<string, unknown> & { id: string; email: string; tags: string[]; createdAt: string; updatedAt: string };

// Every field of a contact, with its type, and nothing else.
function expectContact(value: unknown): Contact {
  expect(value).to.be.an('object');
  const contact = value as Contact;
  expect(contact).to.have.all.keys(...CONTACT_FIELDS);
  expect(contact.id).to.match(UUID);
  expect(contact.email).to.be.a('string');
  for (const field of ['phone', 'firstName', 'lastName']) {
    if (contact[field] !== null) expect(contact[field], field).to.be.a('string');
  }
  expect(contact.tags).to.be.an('array');
  contact.tags.forEach((tag) => expect(tag).to.be.a('string'));
  expect(contact.customFields).to.be.an('object').and.not.be.an('array');
  expect(contact.emailSubscriptionStatus).to.be.oneOf(['subscribed', 'unsubscribed']);
  expect(contact.whatsappSubscriptionStatus).to.be.oneOf(['subscribed', 'unsubscribed']);
  expect(contact.createdAt).to.match(ISO_MS);
  expect(contact.updatedAt).to.match(ISO_MS);
  return contact;
}

// A `{ contact }` body and nothing else.
function contactBody(res: Response, status: number): Contact {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(res.body).to.have.all.keys('contact');
  return expectContact(res.body.contact);
}

// A validation 400: `{ error, details: [{ path, message }] }`, the error naming the first problem.
function expectValidationError(res: Response, path: string) {
  expect(res.status, JSON.stringify(res.body)).to.equal(400);
  expect(res.body).to.have.all.keys('error', 'code', 'details', 'requestId');
  expect(res.body.code).to.equal('validation_failed');
  expect(res.body.details).to.be.an('array').that.is.not.empty;
  for (const detail of res.body.details) {
    expect(detail).to.have.all.keys('path', 'message');
    expect(detail.path).to.be.a('string');
    expect(detail.message).to.be.a('string').that.is.not.empty;
  }
  expect(res.body.details[0].path).to.equal(path);
  expect(res.body.error).to.be.a('string');
  if (path) expect(res.body.error.startsWith(`${path}: `), res.body.error).to.equal(true);
}

async function contactCount(accountId?: string): Promise<number> {
  const [row] = (await testDb().sequelize.query(
    `SELECT COUNT(*) AS n FROM contacts${accountId ? ' WHERE account_id = ?' : ''}`,
    { replacements: accountId ? [accountId] : [], type: 'SELECT' },
  )) as Array<{ n: number | string }>;
  return Number(row.n);
}

interface StoredContact {
  id: string;
  email: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  tags: string[];
  custom_fields: Record<string, unknown>;
  email_subscription_status: string;
  whatsapp_subscription_status: string;
}

async function storedContacts(accountId: string): Promise<StoredContact[]> {
  const rows = (await testDb().sequelize.query(
    `SELECT id, email, phone, first_name, last_name, tags, custom_fields, email_subscription_status,
            whatsapp_subscription_status FROM contacts WHERE account_id = ? ORDER BY email_normalized`,
    { replacements: [accountId], type: 'SELECT' },
  )) as Array<Record<string, unknown>>;
  const parse = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);
  return rows.map((row) => ({ ...row, tags: parse(row.tags), custom_fields: parse(row.custom_fields) }) as StoredContact);
}

function range(count: number, make: (i: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => make(i));
}

function keysObject(count: number, prefix = 'k'): Record<string, number> {
  return Object.fromEntries(range(count, (i) => `${prefix}${i}`).map((key, i) => [key, i]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Bodies that break one rule each, with the path the 400 must name. Shared by create and upsert.
const EMAIL = 'valid@example.com';
const INVALID_CONTACT_BODIES: Array<[string, Record<string, unknown>, string]> = [
  ['a missing email', { firstName: 'Ada' }, 'email'],
  ['a null email', { email: null }, 'email'],
  ['an email that is a number', { email: 123 }, 'email'],
  ['an invalid email', { email: 'not-an-email' }, 'email'],
  ['a blank email', { email: '   ' }, 'email'],
  ['an email over 254 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.io` }, 'email'],
  ['a phone of 2 characters', { email: EMAIL, phone: '12' }, 'phone'],
  ['a phone of 2 characters once trimmed', { email: EMAIL, phone: '  12  ' }, 'phone'],
  ['a phone of 33 characters', { email: EMAIL, phone: '1'.repeat(33) }, 'phone'],
  ['a phone that is a number', { email: EMAIL, phone: 4477009001 }, 'phone'],
  ['a firstName over 255 characters', { email: EMAIL, firstName: 'x'.repeat(256) }, 'firstName'],
  ['a lastName that is a number', { email: EMAIL, lastName: 42 }, 'lastName'],
  ['tags that are a string', { email: EMAIL, tags: 'vip' }, 'tags'],
  ['a tag that is a number', { email: EMAIL, tags: ['ok', 7] }, 'tags.1'],
  ['an empty tag', { email: EMAIL, tags: ['ok', ''] }, 'tags.1'],
  ['a blank tag', { email: EMAIL, tags: ['   '] }, 'tags.0'],
  ['a tag over 64 characters', { email: EMAIL, tags: ['x'.repeat(65)] }, 'tags.0'],
  ['101 tags', { email: EMAIL, tags: range(101, (i) => `t${i}`) }, 'tags'],
  ['customFields that are an array', { email: EMAIL, customFields: [{ a: 1 }] }, 'customFields'],
  ['customFields that are a string', { email: EMAIL, customFields: 'plan=pro' }, 'customFields'],
  ['customFields with 101 keys', { email: EMAIL, customFields: keysObject(101) }, 'customFields'],
  ['customFields over 16 KiB', { email: EMAIL, customFields: { big: 'x'.repeat(16 * 1024) } }, 'customFields'],
  ['an unknown emailSubscriptionStatus', { email: EMAIL, emailSubscriptionStatus: 'maybe' }, 'emailSubscriptionStatus'],
  ['a boolean whatsappSubscriptionStatus', { email: EMAIL, whatsappSubscriptionStatus: true }, 'whatsappSubscriptionStatus'],
];

// Bodies at the edge of every limit, all accepted.
const BOUNDARY_CONTACT_BODIES: Array<[string, Record<string, unknown>]> = [
  ['an email of exactly 254 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.io` }],
  ['a phone of 3 characters', { email: EMAIL, phone: '123' }],
  ['a phone of 32 characters', { email: EMAIL, phone: '1'.repeat(32) }],
  ['a firstName of 255 characters', { email: EMAIL, firstName: 'x'.repeat(255) }],
  ['a tag of 64 characters', { email: EMAIL, tags: ['x'.repeat(64)] }],
  ['100 tags', { email: EMAIL, tags: range(100, (i) => `t${i}`) }],
  ['customFields with 100 keys', { email: EMAIL, customFields: keysObject(100) }],
];

describe('Contacts REST API', () => {
  describe('POST /contacts', () => {
    it('creates a contact: 201 with every field, defaults filled, timestamps with milliseconds', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com' });

      const contact = contactBody(res, 201);
      expect(contact).to.deep.include({
        email: 'ada@example.com',
        phone: null,
        firstName: null,
        lastName: null,
        tags: [],
        customFields: {},
        emailSubscriptionStatus: 'subscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
      expect(contact.createdAt).to.equal(contact.updatedAt);
      expect(Math.abs(Date.parse(contact.createdAt) - Date.now())).to.be.below(60_000);
      const [stored] = await storedContacts(accountId);
      expect(stored.id).to.equal(contact.id);
      expect(stored.email).to.equal('ada@example.com');
    });

    it('stores every given field and returns it as given', async () => {
      const { key } = await buildTenant();
      const body = {
        email: 'grace@example.com',
        phone: '+447700900123',
        firstName: 'Grace',
        lastName: 'Hopper',
        tags: ['navy', 'cobol'],
        customFields: { rank: 'admiral', ships: ['USS Hopper'], meta: { born: 1906 }, nothing: null },
        emailSubscriptionStatus: 'unsubscribed',
        whatsappSubscriptionStatus: 'unsubscribed',
      };
      const created = contactBody(await api(key).post('/contacts').send(body), 201);
      expect(created).to.deep.include(body);

      const fetched = contactBody(await api(key).get(`/contacts/${created.id}`), 200);
      expect(fetched).to.deep.equal(created);
    });

    it('trims the email and the tags, and collapses duplicate tags keeping the first', async () => {
      const { key } = await buildTenant();
      const contact = contactBody(
        await api(key).post('/contacts').send({ email: '  trim@example.com ', tags: [' b ', 'a', 'b', ' a'] }),
        201,
      );
      expect(contact.email).to.equal('trim@example.com');
      expect(contact.tags).to.deep.equal(['b', 'a']);
    });

    it('answers 409 for an email that exists in another case, keeping the first spelling', async () => {
      const { key, accountId } = await buildTenant();
      contactBody(await api(key).post('/contacts').send({ email: 'A@x.io', firstName: 'First' }), 201);
      const res = await api(key).post('/contacts').send({ email: 'a@x.io', firstName: 'Second' });

      expect(res.status).to.equal(409);
      expect(res.body).to.deep.include(EMAIL_TAKEN);
      const stored = await storedContacts(accountId);
      expect(stored).to.have.length(1);
      expect(stored[0].email).to.equal('A@x.io');
      expect(stored[0].first_name).to.equal('First');
    });

    it('answers 409 for the exact same email', async () => {
      const { key } = await buildTenant();
      await api(key).post('/contacts').send({ email: 'same@x.io' });
      const res = await api(key).post('/contacts').send({ email: 'same@x.io' });
      expect(res.status).to.equal(409);
      expect(res.body).to.deep.include(EMAIL_TAKEN);
    });

    for (const [name, body, path] of INVALID_CONTACT_BODIES) {
      it(`answers 400 naming "${path}" for ${name}, and writes nothing`, async () => {
        const { key } = await buildTenant();
        expectValidationError(await api(key).post('/contacts').send(body), path);
        expect(await contactCount()).to.equal(0);
      });
    }

    for (const [name, body] of BOUNDARY_CONTACT_BODIES) {
      it(`accepts ${name}`, async () => {
        const { key } = await buildTenant();
        const contact = contactBody(await api(key).post('/contacts').send(body), 201);
        expect(contact).to.deep.include(body);
      });
    }

    it('answers 400 for a body that is a JSON array', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').send([{ email: EMAIL }]);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include({ error: 'Request body must be a JSON object' });
      expect(await contactCount()).to.equal(0);
    });

    it('ignores unknown body fields, including a client-sent id and timestamps', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').send({
        email: 'extra@example.com',
        id: UNKNOWN_ID,
        createdAt: '2000-01-01T00:00:00.000Z',
        favouriteColour: 'blue',
      });

      const contact = contactBody(res, 201);
      expect(contact.id).to.not.equal(UNKNOWN_ID);
      expect(contact.createdAt).to.not.equal('2000-01-01T00:00:00.000Z');
      expect(contact).to.not.have.property('favouriteColour');
    });

    it('accepts Content-Type "application/json; charset=utf-8"', async () => {
      const { key } = await buildTenant();
      const res = await api(key)
        .post('/contacts')
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ email: 'charset@example.com', firstName: 'Zoë' }));

      const contact = contactBody(res, 201);
      expect(contact.firstName).to.equal('Zoë');
    });
  });

  describe('POST /contacts/upsert', () => {
    it('creates a new contact: 201 with created true', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts/upsert').send({ email: 'new@example.com', firstName: 'New' });

      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('contact', 'created');
      expect(res.body.created).to.equal(true);
      const contact = expectContact(res.body.contact);
      expect(contact).to.deep.include({ email: 'new@example.com', firstName: 'New', tags: [], customFields: {} });
      expect(contact.createdAt).to.equal(contact.updatedAt);
    });

    it('updates an existing contact: 200 with created false and the merge rules applied, as a later GET shows', async () => {
      const { key } = await buildTenant();
      const first = await api(key)
        .post('/contacts/upsert')
        .send({
          email: 'Ada@Example.com',
          phone: '+441111',
          firstName: 'Ada',
          lastName: 'Lovelace',
          tags: ['a', 'b'],
          customFields: { plan: 'pro', address: { city: 'Leeds', zip: 'LS1' }, list: [1, 2], gone: { x: 1 } },
          emailSubscriptionStatus: 'unsubscribed',
        });
      expect(first.status).to.equal(201);
      const original = expectContact(first.body.contact);
      await sleep(5);

      const second = await api(key)
        .post('/contacts/upsert')
        .send({
          email: 'ada@example.com',
          phone: null,
          firstName: 'Augusta',
          tags: [],
          customFields: { address: { city: 'York' }, list: [3], gone: null, extra: true },
          whatsappSubscriptionStatus: 'unsubscribed',
        });

      expect(second.status).to.equal(200);
      expect(second.body).to.have.all.keys('contact', 'created');
      expect(second.body.created).to.equal(false);
      const merged = expectContact(second.body.contact);
      const expected = {
        id: original.id,
        email: 'Ada@Example.com',
        phone: '+441111',
        firstName: 'Augusta',
        lastName: 'Lovelace',
        tags: ['a', 'b'],
        customFields: { plan: 'pro', address: { city: 'York', zip: 'LS1' }, list: [3], gone: null, extra: true },
        emailSubscriptionStatus: 'unsubscribed',
        whatsappSubscriptionStatus: 'unsubscribed',
        createdAt: original.createdAt,
      };
      expect(merged).to.deep.include(expected);
      expect(Date.parse(merged.updatedAt)).to.be.above(Date.parse(original.updatedAt));

      const fetched = contactBody(await api(key).get(`/contacts/${original.id}`), 200);
      expect(fetched).to.deep.equal(merged);
    });

    it('replaces tags when the upsert sends a non-empty list', async () => {
      const { key } = await buildTenant();
      await api(key).post('/contacts/upsert').send({ email: 'tags@example.com', tags: ['a', 'b'] });
      const res = await api(key).post('/contacts/upsert').send({ email: 'tags@example.com', tags: ['c', 'c', 'a'] });

      expect(res.status).to.equal(200);
      expect(res.body.contact.tags).to.deep.equal(['c', 'a']);
      const fetched = contactBody(await api(key).get('/contacts/by-email/tags@example.com'), 200);
      expect(fetched.tags).to.deep.equal(['c', 'a']);
    });

    it('keeps everything when the upsert sends only the email', async () => {
      const { key } = await buildTenant();
      const created = contactBody(
        await api(key)
          .post('/contacts')
          .send({ email: 'keep@example.com', phone: '123', firstName: 'F', lastName: 'L', tags: ['t'], customFields: { a: 1 } }),
        201,
      );
      const res = await api(key).post('/contacts/upsert').send({ email: 'keep@example.com' });

      expect(res.status).to.equal(200);
      const { updatedAt: _updated, ...unchanged } = created;
      expect(res.body.contact).to.deep.include(unchanged);
    });

    it('stores null phone and names as null on a new contact', async () => {
      const { key } = await buildTenant();
      const res = await api(key)
        .post('/contacts/upsert')
        .send({ email: 'nulls@example.com', phone: null, firstName: null, lastName: null });
      expect(res.status).to.equal(201);
      expect(res.body.contact).to.deep.include({ phone: null, firstName: null, lastName: null });
    });

    it('answers 400 naming the field for invalid input, and writes nothing', async () => {
      const { key } = await buildTenant();
      expectValidationError(await api(key).post('/contacts/upsert').send({ firstName: 'no email' }), 'email');
      expectValidationError(await api(key).post('/contacts/upsert').send({ email: EMAIL, phone: '1'.repeat(33) }), 'phone');
      expectValidationError(await api(key).post('/contacts/upsert').send({ email: EMAIL, customFields: [] }), 'customFields');
      expect(await contactCount()).to.equal(0);
    });

    it('answers 400 naming customFields when the merge would exceed 100 keys, leaving the contact as it was', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(100) });
      const res = await api(key)
        .post('/contacts/upsert')
        .send({ email: 'full@example.com', firstName: 'Changed', customFields: { extra: 1 } });

      expectValidationError(res, 'customFields');
      const [stored] = await storedContacts(accountId);
      expect(stored.first_name).to.equal(null);
      expect(Object.keys(stored.custom_fields)).to.have.length(100);
    });

    it('ignores unknown body fields', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts/upsert').send({ email: 'x@example.com', created: false, nickname: 'X' });
      expect(res.status).to.equal(201);
      expect(res.body.created).to.equal(true);
      expect(res.body.contact).to.not.have.property('nickname');
    });
  });

  describe('POST /contacts/batch', () => {
    it('answers 201 with the summary and applies every item by email', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'Old@Example.com', firstName: 'Old', tags: ['keep'] });

      const res = await api(key)
        .post('/contacts/batch')
        .send({
          contacts: [
            { email: 'old@example.com', lastName: 'Updated', tags: [] },
            { email: 'new1@example.com', firstName: 'One' },
            { email: 'new2@example.com', nickname: 'ignored' },
            { email: 'NEW1@example.com', lastName: 'Again' },
          ],
        });

      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ summary: { total: 4, inserted: 2, updated: 2 } });
      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['new1@example.com', 'new2@example.com', 'Old@Example.com']);
      expect(stored[0]).to.include({ first_name: 'One', last_name: 'Again' });
      expect(stored[2]).to.include({ first_name: 'Old', last_name: 'Updated' });
      expect(stored[2].tags).to.deep.equal(['keep']);
    });

    it('accepts exactly 100 items', async () => {
      const { key, accountId } = await buildTenant();
      const contacts = range(100, (i) => `bulk-${i}@example.com`).map((email) => ({ email }));
      const res = await api(key).post('/contacts/batch').send({ contacts });

      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ summary: { total: 100, inserted: 100, updated: 0 } });
      expect(await contactCount(accountId)).to.equal(100);
    });

    it('answers 400 naming "contacts" for an empty batch', async () => {
      const { key } = await buildTenant();
      expectValidationError(await api(key).post('/contacts/batch').send({ contacts: [] }), 'contacts');
    });

    it('answers 400 naming "contacts" for 101 items, and writes nothing', async () => {
      const { key } = await buildTenant();
      const contacts = range(101, (i) => `bulk-${i}@example.com`).map((email) => ({ email }));
      expectValidationError(await api(key).post('/contacts/batch').send({ contacts }), 'contacts');
      expect(await contactCount()).to.equal(0);
    });

    it('answers 400 naming "contacts" when the list is missing or not an array', async () => {
      const { key } = await buildTenant();
      expectValidationError(await api(key).post('/contacts/batch').send({}), 'contacts');
      expectValidationError(await api(key).post('/contacts/batch').send({ contacts: { email: EMAIL } }), 'contacts');
    });

    it('answers 400 naming contacts.3.email when item 3 has an invalid email, and writes nothing at all', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'existing@example.com', firstName: 'Before' });
      const res = await api(key)
        .post('/contacts/batch')
        .send({
          contacts: [
            { email: 'first@example.com' },
            { email: 'existing@example.com', firstName: 'After' },
            { email: 'third@example.com' },
            { email: 'broken-address' },
            { email: 'fifth@example.com' },
          ],
        });

      expectValidationError(res, 'contacts.3.email');
      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['existing@example.com']);
      expect(stored[0].first_name).to.equal('Before');
    });

    it('answers 400 naming the item and field for other invalid items', async () => {
      const { key } = await buildTenant();
      const cases: Array<[Record<string, unknown>[], string]> = [
        [[{ email: EMAIL }, { firstName: 'no email' }], 'contacts.1.email'],
        [[{ email: EMAIL }, { email: 'b@example.com' }, { email: 'c@example.com', phone: 'ab' }], 'contacts.2.phone'],
        [[{ email: EMAIL, tags: ['x'.repeat(65)] }], 'contacts.0.tags.0'],
        [[{ email: EMAIL }, 'not an object' as never], 'contacts.1'],
      ];
      for (const [contacts, path] of cases) {
        expectValidationError(await api(key).post('/contacts/batch').send({ contacts }), path);
      }
      expect(await contactCount()).to.equal(0);
    });

    it('answers 400 naming the item whose merge exceeds 100 custom fields, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(90) });
      const res = await api(key)
        .post('/contacts/batch')
        .send({
          contacts: [
            { email: 'fresh@example.com' },
            { email: 'full@example.com', customFields: keysObject(11, 'new') },
          ],
        });

      expectValidationError(res, 'contacts.1.customFields');
      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['full@example.com']);
      expect(Object.keys(stored[0].custom_fields)).to.have.length(90);
    });

    it('applies the upsert merge rules to each item', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, {
        email: 'merge@example.com',
        phone: '555',
        tags: ['keep'],
        customFields: { a: { x: 1 } },
        emailSubscriptionStatus: 'unsubscribed',
      });
      const res = await api(key)
        .post('/contacts/batch')
        .send({ contacts: [{ email: 'MERGE@example.com', phone: null, tags: [], customFields: { a: { y: 2 } } }] });

      expect(res.status).to.equal(201);
      const contact = contactBody(await api(key).get('/contacts/by-email/merge@example.com'), 200);
      expect(contact).to.deep.include({
        email: 'merge@example.com',
        phone: '555',
        tags: ['keep'],
        customFields: { a: { x: 1, y: 2 } },
        emailSubscriptionStatus: 'unsubscribed',
      });
    });
  });

  describe('GET /contacts/:id', () => {
    it('answers 200 with the contact exactly as created', async () => {
      const { key } = await buildTenant();
      const created = contactBody(
        await api(key).post('/contacts').send({ email: 'get@example.com', tags: ['x'], customFields: { n: 1 } }),
        201,
      );
      const fetched = contactBody(await api(key).get(`/contacts/${created.id}`), 200);
      expect(fetched).to.deep.equal(created);
    });

    it('finds the contact whatever the case of the id', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const fetched = contactBody(await api(key).get(`/contacts/${created.id.toUpperCase()}`), 200);
      expect(fetched.id).to.equal(created.id);
    });

    for (const [name, id] of [
      ['an unknown id', UNKNOWN_ID],
      ['a malformed id', 'not-a-uuid'],
    ]) {
      it(`answers 404 "Contact not found" for ${name}`, async () => {
        const { key, accountId } = await buildTenant();
        await buildContact(accountId);
        const res = await api(key).get(`/contacts/${id}`);
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      });
    }
  });

  describe('GET /contacts/by-email/:email', () => {
    it('answers 200 with the same body as get by id', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'ada@example.com' });
      const byId = contactBody(await api(key).get(`/contacts/${created.id}`), 200);
      const byEmail = contactBody(await api(key).get('/contacts/by-email/ada@example.com'), 200);
      expect(byEmail).to.deep.equal(byId);
    });

    const paths: Array<[string, string]> = [
      ['the @ encoded as %40', '/contacts/by-email/ada%2Bnews%40example.com'],
      ['a literal @ and a literal +', '/contacts/by-email/ada+news@example.com'],
      ['the + encoded as %2B', '/contacts/by-email/ada%2Bnews@example.com'],
      ['a different case', '/contacts/by-email/ADA%2BNEWS%40Example.COM'],
    ];
    for (const [name, path] of paths) {
      it(`finds the contact with ${name}`, async () => {
        const { key, accountId } = await buildTenant();
        await buildContact(accountId, { email: 'Ada+News@example.com' });
        const contact = contactBody(await api(key).get(path), 200);
        expect(contact.email).to.equal('Ada+News@example.com');
      });
    }

    it('does not read a + as a space', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'ada+news@example.com' });
      const res = await api(key).get('/contacts/by-email/ada%20news@example.com');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include(NOT_FOUND);
    });

    it('answers 404 "Contact not found" for an unknown email', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'someone@example.com' });
      const res = await api(key).get('/contacts/by-email/nobody%40example.com');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include(NOT_FOUND);
    });
  });

  describe('PUT /contacts/:id', () => {
    it('changes only the given fields: 200 with the contact, createdAt kept and updatedAt moved on', async () => {
      const { key } = await buildTenant();
      const created = contactBody(
        await api(key)
          .post('/contacts')
          .send({ email: 'put@example.com', phone: '555', firstName: 'Ada', lastName: 'L', tags: ['t'], customFields: { a: 1 } }),
        201,
      );
      await sleep(5);
      const updated = contactBody(await api(key).put(`/contacts/${created.id}`).send({ firstName: 'Augusta' }), 200);

      expect(updated).to.deep.include({ ...created, firstName: 'Augusta', updatedAt: updated.updatedAt });
      expect(updated.createdAt).to.equal(created.createdAt);
      expect(Date.parse(updated.updatedAt)).to.be.above(Date.parse(created.updatedAt));
      const fetched = contactBody(await api(key).get(`/contacts/${created.id}`), 200);
      expect(fetched).to.deep.equal(updated);
    });

    it('clears phone, firstName and lastName when sent null', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { phone: '555', firstName: 'F', lastName: 'L' });
      const updated = contactBody(
        await api(key).put(`/contacts/${created.id}`).send({ phone: null, firstName: null, lastName: null }),
        200,
      );

      expect(updated).to.deep.include({ phone: null, firstName: null, lastName: null });
      const [stored] = await storedContacts(accountId);
      expect(stored).to.include({ phone: null, first_name: null, last_name: null });
    });

    it('replaces tags and customFields instead of merging them', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'], customFields: { keep: { x: 1 }, other: 2 } });
      const updated = contactBody(
        await api(key)
          .put(`/contacts/${created.id}`)
          .send({ tags: ['c', 'c', 'd'], customFields: { keep: { y: 2 } } }),
        200,
      );

      expect(updated.tags).to.deep.equal(['c', 'd']);
      expect(updated.customFields).to.deep.equal({ keep: { y: 2 } });
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.deep.equal(['c', 'd']);
      expect(stored.custom_fields).to.deep.equal({ keep: { y: 2 } });
    });

    it('clears tags and customFields when sent empty', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a'], customFields: { a: 1 } });
      const updated = contactBody(await api(key).put(`/contacts/${created.id}`).send({ tags: [], customFields: {} }), 200);
      expect(updated.tags).to.deep.equal([]);
      expect(updated.customFields).to.deep.equal({});
    });

    it('changes the email, so that the contact is found by the new one only', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'old@example.com' });
      const updated = contactBody(await api(key).put(`/contacts/${created.id}`).send({ email: 'New@Example.com' }), 200);

      expect(updated.email).to.equal('New@Example.com');
      expect((await api(key).get('/contacts/by-email/new@example.com')).status).to.equal(200);
      expect((await api(key).get('/contacts/by-email/old@example.com')).status).to.equal(404);
    });

    it('lets a contact change the case of its own email', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'case@example.com' });
      const updated = contactBody(await api(key).put(`/contacts/${created.id}`).send({ email: 'CASE@example.com' }), 200);
      expect(updated.email).to.equal('CASE@example.com');
      expect(await contactCount()).to.equal(1);
    });

    it("answers 409 when the new email is another contact's, in any case, and changes nothing", async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'taken@example.com' });
      const mine = await buildContact(accountId, { email: 'mine@example.com', firstName: 'Mine' });
      const res = await api(key).put(`/contacts/${mine.id}`).send({ email: 'Taken@Example.com', firstName: 'Changed' });

      expect(res.status).to.equal(409);
      expect(res.body).to.deep.include(EMAIL_TAKEN);
      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['mine@example.com', 'taken@example.com']);
      expect(stored[0].first_name).to.equal('Mine');
    });

    it('accepts a whole contact read back from GET, ignoring its read-only fields', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'roundtrip@example.com', tags: ['a'] });
      const fetched = contactBody(await api(key).get(`/contacts/${created.id}`), 200);
      const res = await api(key)
        .put(`/contacts/${created.id}`)
        .send({ ...fetched, firstName: 'Round', createdAt: '2000-01-01T00:00:00.000Z' });

      const updated = contactBody(res, 200);
      expect(updated).to.deep.include({ firstName: 'Round', email: 'roundtrip@example.com', tags: ['a'] });
      expect(updated.createdAt).to.equal(created.createdAt);
    });

    it('updates the contact named by the path, not an id in the body', async () => {
      const { key, accountId } = await buildTenant();
      const target = await buildContact(accountId, { email: 'target@example.com' });
      const bystander = await buildContact(accountId, { email: 'bystander@example.com' });
      const updated = contactBody(
        await api(key).put(`/contacts/${target.id}`).send({ id: bystander.id, firstName: 'Hit' }),
        200,
      );

      expect(updated.id).to.equal(target.id);
      const stored = await storedContacts(accountId);
      expect(stored.find((c) => c.id === bystander.id)?.first_name).to.equal(null);
      expect(stored.find((c) => c.id === target.id)?.first_name).to.equal('Hit');
    });

    const invalid: Array<[string, Record<string, unknown>, string]> = [
      ['an invalid email', { email: 'nope' }, 'email'],
      ['a null email', { email: null }, 'email'],
      ['a phone of 2 characters', { phone: 'ab' }, 'phone'],
      ['a phone of 33 characters', { phone: '1'.repeat(33) }, 'phone'],
      ['a firstName that is a number', { firstName: 5 }, 'firstName'],
      ['tags that are not an array', { tags: 'a,b' }, 'tags'],
      ['a tag over 64 characters', { tags: ['x'.repeat(65)] }, 'tags.0'],
      ['101 tags', { tags: range(101, (i) => `t${i}`) }, 'tags'],
      ['customFields that are an array', { customFields: [] }, 'customFields'],
      ['customFields with 101 keys', { customFields: keysObject(101) }, 'customFields'],
      ['an unknown subscription status', { whatsappSubscriptionStatus: 'never' }, 'whatsappSubscriptionStatus'],
    ];
    for (const [name, body, path] of invalid) {
      it(`answers 400 naming "${path}" for ${name}, and changes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const created = await buildContact(accountId, { email: 'stay@example.com', phone: '555', tags: ['t'] });
        expectValidationError(await api(key).put(`/contacts/${created.id}`).send(body), path);
        const [stored] = await storedContacts(accountId);
        expect(stored).to.deep.include({ email: 'stay@example.com', phone: '555', tags: ['t'] });
      });
    }

    for (const [name, id] of [
      ['an unknown id', UNKNOWN_ID],
      ['a malformed id', 'not-a-uuid'],
    ]) {
      it(`answers 404 "Contact not found" for ${name}`, async () => {
        const { key } = await buildTenant();
        const res = await api(key).put(`/contacts/${id}`).send({ firstName: 'x' });
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      });
    }

    it('accepts Content-Type "application/json; charset=utf-8"', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const res = await api(key)
        .put(`/contacts/${created.id}`)
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ lastName: 'Ångström' }));
      expect(contactBody(res, 200).lastName).to.equal('Ångström');
    });
  });

  describe('PATCH /contacts/:id/subscriptions', () => {
    it('changes the email status alone and keeps the WhatsApp one', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { whatsappSubscriptionStatus: 'unsubscribed' });
      const contact = contactBody(
        await api(key).patch(`/contacts/${created.id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }),
        200,
      );

      expect(contact).to.deep.include({ emailSubscriptionStatus: 'unsubscribed', whatsappSubscriptionStatus: 'unsubscribed' });
      const [stored] = await storedContacts(accountId);
      expect(stored.email_subscription_status).to.equal('unsubscribed');
      expect(stored.whatsapp_subscription_status).to.equal('unsubscribed');
    });

    it('changes both statuses, in either direction', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { emailSubscriptionStatus: 'unsubscribed' });
      const contact = contactBody(
        await api(key)
          .patch(`/contacts/${created.id}/subscriptions`)
          .send({ emailSubscriptionStatus: 'subscribed', whatsappSubscriptionStatus: 'unsubscribed' }),
        200,
      );
      expect(contact).to.deep.include({ emailSubscriptionStatus: 'subscribed', whatsappSubscriptionStatus: 'unsubscribed' });
    });

    it('leaves the other fields alone', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { firstName: 'F', tags: ['t'], customFields: { a: 1 } });
      const contact = contactBody(
        await api(key).patch(`/contacts/${created.id}/subscriptions`).send({ whatsappSubscriptionStatus: 'unsubscribed' }),
        200,
      );
      expect(contact).to.deep.include({ firstName: 'F', tags: ['t'], customFields: { a: 1 }, email: created.email });
    });

    it('answers 400 when neither status is given, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const res = await api(key).patch(`/contacts/${created.id}/subscriptions`).send({});

      expectValidationError(res, '');
      expect(res.body.error).to.match(/emailSubscriptionStatus or whatsappSubscriptionStatus/);
      const [stored] = await storedContacts(accountId);
      expect(stored.email_subscription_status).to.equal('subscribed');
    });

    it('answers 400 naming the field for an unknown status value', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      expectValidationError(
        await api(key).patch(`/contacts/${created.id}/subscriptions`).send({ emailSubscriptionStatus: 'maybe' }),
        'emailSubscriptionStatus',
      );
    });

    it('answers 404 "Contact not found" for an unknown or malformed id', async () => {
      const { key } = await buildTenant();
      for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
        const res = await api(key).patch(`/contacts/${id}/subscriptions`).send({ emailSubscriptionStatus: 'subscribed' });
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      }
    });
  });

  describe('DELETE /contacts/:id', () => {
    it('answers 204 with no body, after which GET answers 404', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const res = await api(key).delete(`/contacts/${created.id}`);

      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      expect(res.headers['content-type']).to.equal(undefined);
      expect(await contactCount()).to.equal(0);
      const after = await api(key).get(`/contacts/${created.id}`);
      expect(after.status).to.equal(404);
      expect(after.body).to.deep.include(NOT_FOUND);
    });

    it('deletes only the named contact', async () => {
      const { key, accountId } = await buildTenant();
      const doomed = await buildContact(accountId);
      const kept = await buildContact(accountId);
      expect((await api(key).delete(`/contacts/${doomed.id}`)).status).to.equal(204);
      expect((await storedContacts(accountId)).map((c) => c.id)).to.deep.equal([kept.id]);
    });

    it("removes the contact's sequence runs with it", async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const sequence = await buildSequence(accountId);
      await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: contact.email } });
      expect(await storedRuns({ contactId: contact.id })).to.have.length(1);

      expect((await api(key).delete(`/contacts/${contact.id}`)).status).to.equal(204);
      expect(await storedRuns({ contactId: contact.id })).to.deep.equal([]);
    });

    it('answers 404 on a second delete of the same contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      await api(key).delete(`/contacts/${created.id}`);
      const res = await api(key).delete(`/contacts/${created.id}`);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include(NOT_FOUND);
    });

    for (const [name, id] of [
      ['an unknown id', UNKNOWN_ID],
      ['a malformed id', 'not-a-uuid'],
    ]) {
      it(`answers 404 "Contact not found" for ${name}, deleting nothing`, async () => {
        const { key, accountId } = await buildTenant();
        await buildContact(accountId);
        const res = await api(key).delete(`/contacts/${id}`);
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
        expect(await contactCount()).to.equal(1);
      });
    }
  });

  describe('POST /contacts/:id/tags', () => {
    it('appends new tags in request order, ignoring ones already there and repeats', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const contact = contactBody(
        await api(key).post(`/contacts/${created.id}/tags`).send({ tags: ['d', 'a', 'c', 'd', ' e '] }),
        200,
      );

      expect(contact.tags).to.deep.equal(['a', 'b', 'd', 'c', 'e']);
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.deep.equal(['a', 'b', 'd', 'c', 'e']);
    });

    it('answers 400 naming "tags" when adding would exceed 100 tags, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: range(99, (i) => `t${i}`) });
      const res = await api(key).post(`/contacts/${created.id}/tags`).send({ tags: ['new1', 'new2'] });

      expectValidationError(res, 'tags');
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.have.length(99);
    });

    it('accepts tags already present even on a full contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: range(100, (i) => `t${i}`) });
      const contact = contactBody(await api(key).post(`/contacts/${created.id}/tags`).send({ tags: ['t5'] }), 200);
      expect(contact.tags).to.have.length(100);
    });

    const invalid: Array<[string, Record<string, unknown>, string]> = [
      ['a missing tags field', {}, 'tags'],
      ['an empty list', { tags: [] }, 'tags'],
      ['tags that are a string', { tags: 'vip' }, 'tags'],
      ['a tag over 64 characters', { tags: ['x'.repeat(65)] }, 'tags.0'],
      ['an empty tag', { tags: ['ok', ''] }, 'tags.1'],
      ['101 tags', { tags: range(101, (i) => `t${i}`) }, 'tags'],
    ];
    for (const [name, body, path] of invalid) {
      it(`answers 400 naming "${path}" for ${name}`, async () => {
        const { key, accountId } = await buildTenant();
        const created = await buildContact(accountId, { tags: ['a'] });
        expectValidationError(await api(key).post(`/contacts/${created.id}/tags`).send(body), path);
        const [stored] = await storedContacts(accountId);
        expect(stored.tags).to.deep.equal(['a']);
      });
    }

    it('answers 404 "Contact not found" for an unknown or malformed id', async () => {
      const { key } = await buildTenant();
      for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
        const res = await api(key).post(`/contacts/${id}/tags`).send({ tags: ['x'] });
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      }
    });
  });

  describe('DELETE /contacts/:id/tags', () => {
    it('answers 200 with the contact, the named tags removed and the others in order', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b', 'c', 'd'] });
      const contact = contactBody(await api(key).delete(`/contacts/${created.id}/tags`).send({ tags: ['c', 'a'] }), 200);

      expect(contact.tags).to.deep.equal(['b', 'd']);
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.deep.equal(['b', 'd']);
    });

    it('removes a single tag', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const contact = contactBody(await api(key).delete(`/contacts/${created.id}/tags`).send({ tags: ['b'] }), 200);
      expect(contact.tags).to.deep.equal(['a']);
    });

    it('ignores tags that are not on the contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const contact = contactBody(
        await api(key).delete(`/contacts/${created.id}/tags`).send({ tags: ['zzz', 'b', 'yyy'] }),
        200,
      );
      expect(contact.tags).to.deep.equal(['a']);
    });

    it('accepts Content-Type "application/json; charset=utf-8"', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const res = await api(key)
        .delete(`/contacts/${created.id}/tags`)
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ tags: ['a'] }));
      expect(contactBody(res, 200).tags).to.deep.equal(['b']);
    });

    it('answers 400 naming "tags" without a body or with an empty list', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a'] });
      expectValidationError(await api(key).delete(`/contacts/${created.id}/tags`), 'tags');
      expectValidationError(await api(key).delete(`/contacts/${created.id}/tags`).send({ tags: [] }), 'tags');
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.deep.equal(['a']);
    });

    it('answers 404 "Contact not found" for an unknown or malformed id', async () => {
      const { key } = await buildTenant();
      for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
        const res = await api(key).delete(`/contacts/${id}/tags`).send({ tags: ['x'] });
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      }
    });
  });

  describe('account isolation', () => {
    async function twoAccounts() {
      const owner = await buildTenant();
      const intruder = await buildTenant();
      const contact = await buildContact(owner.accountId, {
        email: 'private@example.com',
        firstName: 'Owner',
        tags: ['a'],
        emailSubscriptionStatus: 'subscribed',
      });
      return { owner, intruder, contact };
    }

    it("answers 404 to another account's reads of a contact, by id and by email", async () => {
      const { intruder, contact } = await twoAccounts();
      for (const path of [`/contacts/${contact.id}`, '/contacts/by-email/private@example.com']) {
        const res = await api(intruder.key).get(path);
        expect(res.status, path).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      }
    });

    it("answers 404 to another account's writes of a contact, and the contact stays as it was", async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const client = api(intruder.key);
      const attempts = [
        () => client.put(`/contacts/${contact.id}`).send({ firstName: 'Intruder' }),
        () => client.patch(`/contacts/${contact.id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }),
        () => client.post(`/contacts/${contact.id}/tags`).send({ tags: ['hacked'] }),
        () => client.delete(`/contacts/${contact.id}/tags`).send({ tags: ['a'] }),
        () => client.delete(`/contacts/${contact.id}`),
      ];
      for (const attempt of attempts) {
        const res = await attempt();
        expect(res.status).to.equal(404);
        expect(res.body).to.deep.include(NOT_FOUND);
      }

      const fetched = contactBody(await api(owner.key).get(`/contacts/${contact.id}`), 200);
      expect(fetched).to.deep.equal(contact);
    });

    it('lets the same email exist in two accounts, each seeing its own', async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const theirs = contactBody(
        await api(intruder.key).post('/contacts').send({ email: 'PRIVATE@example.com', firstName: 'Intruder' }),
        201,
      );

      expect(theirs.id).to.not.equal(contact.id);
      expect(contactBody(await api(owner.key).get('/contacts/by-email/private@example.com'), 200).firstName).to.equal(
        'Owner',
      );
      expect(contactBody(await api(intruder.key).get('/contacts/by-email/private@example.com'), 200).firstName).to.equal(
        'Intruder',
      );
    });

    it("creates a separate contact when another account upserts or batches an email it does not own", async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const upsert = await api(intruder.key).post('/contacts/upsert').send({ email: 'private@example.com', firstName: 'X' });
      expect(upsert.status).to.equal(201);
      expect(upsert.body.created).to.equal(true);
      const batch = await api(intruder.key)
        .post('/contacts/batch')
        .send({ contacts: [{ email: 'private@example.com', lastName: 'Y' }] });
      expect(batch.body).to.deep.equal({ summary: { total: 1, inserted: 0, updated: 1 } });

      const ownerRows = await storedContacts(owner.accountId);
      expect(ownerRows).to.have.length(1);
      expect(ownerRows[0]).to.include({ id: contact.id, first_name: 'Owner', last_name: null });
      expect(await contactCount(intruder.accountId)).to.equal(1);
    });
  });
});
