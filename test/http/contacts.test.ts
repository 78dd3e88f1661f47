import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../support/app';
import { contactCount, storedContacts } from '../support/contact-rows';
import { buildContact, buildTenant } from '../support/factories';

// The Contacts REST surface (docs/api.md "Contacts", docs/decisions.md "Errors"): paths, statuses,
// headers and bodies. What each procedure stores and merges: test/procedures/contacts.test.ts.

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

const EMAIL = 'valid@example.com';

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

    it('answers 409 for the exact same email', async () => {
      const { key } = await buildTenant();
      await api(key).post('/contacts').send({ email: 'same@x.io' });
      const res = await api(key).post('/contacts').send({ email: 'same@x.io' });
      expect(res.status).to.equal(409);
      expect(res.body).to.deep.include(EMAIL_TAKEN);
    });

    it('answers 400 for a body that is a JSON array', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/contacts').send([{ email: EMAIL }]);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.include({ error: 'Request body must be a JSON object' });
      expect(await contactCount()).to.equal(0);
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

    it('answers 200 with created false for an email that exists, in any case', async () => {
      const { key, accountId } = await buildTenant();
      const existing = await buildContact(accountId, { email: 'Old@Example.com' });
      const res = await api(key).post('/contacts/upsert').send({ email: 'old@example.com', firstName: 'Again' });

      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('contact', 'created');
      expect(res.body.created).to.equal(false);
      expect(expectContact(res.body.contact)).to.deep.include({ id: existing.id, email: 'Old@Example.com', firstName: 'Again' });
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
            { email: 'new2@example.com', id: 'ignored', createdAt: 'ignored' },
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

    for (const [name, id] of [
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
  });

  describe('PUT /contacts/:id', () => {
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

    for (const [name, id] of [
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

    for (const [name, id] of [
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

});
