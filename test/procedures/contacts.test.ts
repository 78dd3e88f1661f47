import { TRPCError } from '@trpc/server';
import { expect } from 'chai';
import { enrollContact } from '../../src/services/sequences/enroll-contact';
import { contactCount, storedContacts } from '../support/contact-rows';
import { testDb } from '../support/db';
import { caller } from '../support/app';
import { buildApiKey, buildContact, buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';
import { badRequest, rejectedWith, trpcRejection } from '../support/trpc';
import { issueDetails } from '../../src/trpc/errors';

// The contacts procedures through tRPC's createCaller: the same middlewares (auth included) as
// HTTP, with errors as TRPCError codes; what each procedure stores, merges and returns
// (docs/decisions.md "Contacts", "Batch and bulk"). Paths, statuses and bodies: test/http/contacts.test.ts.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const NOT_FOUND = { error: 'Contact not found', code: 'not_found' };
const EMAIL_TAKEN = { error: 'A contact with this email already exists', code: 'contact_exists' };

function range(count: number, make: (i: number) => string): string[] {
  return Array.from({ length: count }, (_, i) => make(i));
}

function keysObject(count: number, prefix = 'k'): Record<string, number> {
  return Object.fromEntries(range(count, (i) => `${prefix}${i}`).map((key, i) => [key, i]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Inputs that break one rule each, with the path the BAD_REQUEST must name first. Shared by
// create and upsert.
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

// Inputs at the edge of every limit, all accepted.
const BOUNDARY_CONTACT_BODIES: Array<[string, Record<string, unknown>]> = [
  ['an email of exactly 254 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.io` }],
  ['a phone of 3 characters', { email: EMAIL, phone: '123' }],
  ['a phone of 32 characters', { email: EMAIL, phone: '1'.repeat(32) }],
  ['a firstName of 255 characters', { email: EMAIL, firstName: 'x'.repeat(255) }],
  ['a tag of 64 characters', { email: EMAIL, tags: ['x'.repeat(64)] }],
  ['100 tags', { email: EMAIL, tags: range(100, (i) => `t${i}`) }],
  ['customFields with 100 keys', { email: EMAIL, customFields: keysObject(100) }],
];

describe('contacts procedures', () => {
  describe('create', () => {
    it('creates a contact with defaults for what is not given', async () => {
      const { key } = await buildTenant();
      const { contact } = await caller(key).contacts.create({ email: 'Ada@Example.com', firstName: 'Ada' });

      expect(contact.id).to.match(UUID);
      expect(contact).to.include({
        email: 'Ada@Example.com',
        firstName: 'Ada',
        lastName: null,
        phone: null,
        emailSubscriptionStatus: 'subscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
      expect(contact.tags).to.deep.equal([]);
      expect(contact.customFields).to.deep.equal({});
      expect(await contactCount()).to.equal(1);
    });

    it('fails with CONFLICT when the email exists in another case', async () => {
      const { key } = await buildTenant();
      await caller(key).contacts.create({ email: 'a@x.io' });
      const error = await trpcRejection(caller(key).contacts.create({ email: 'A@X.IO' }));

      expect(error.code).to.equal('CONFLICT');
      expect(error.message).to.equal('A contact with this email already exists');
      expect(await contactCount()).to.equal(1);
    });

    it('fails with BAD_REQUEST on an invalid email and writes nothing', async () => {
      const { key } = await buildTenant();
      const error = await trpcRejection(caller(key).contacts.create({ email: 'not-an-email' }));

      expect(error.code).to.equal('BAD_REQUEST');
      expect(await contactCount()).to.equal(0);
    });

    it('fails with BAD_REQUEST on a phone shorter than 3 characters', async () => {
      const { key } = await buildTenant();
      const error = await trpcRejection(caller(key).contacts.create({ email: 'a@x.io', phone: '12' }));
      expect(error.code).to.equal('BAD_REQUEST');
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
        emailSubscriptionStatus: 'unsubscribed' as const,
        whatsappSubscriptionStatus: 'unsubscribed' as const,
      };
      const { contact: created } = await caller(key).contacts.create(body);
      expect(created).to.deep.include(body);

      const { contact: fetched } = await caller(key).contacts.get({ id: created.id });
      expect(fetched).to.deep.equal(created);
    });

    it('trims the email and the tags, and collapses duplicate tags keeping the first', async () => {
      const { key } = await buildTenant();
      const { contact } = await caller(key).contacts.create({ email: '  trim@example.com ', tags: [' b ', 'a', 'b', ' a'] });
      expect(contact.email).to.equal('trim@example.com');
      expect(contact.tags).to.deep.equal(['b', 'a']);
    });

    it('fails with CONFLICT for an email that exists in another case, keeping the first spelling', async () => {
      const { key, accountId } = await buildTenant();
      await caller(key).contacts.create({ email: 'A@x.io', firstName: 'First' });
      await rejectedWith(caller(key).contacts.create({ email: 'a@x.io', firstName: 'Second' }), 'CONFLICT', EMAIL_TAKEN);

      const stored = await storedContacts(accountId);
      expect(stored).to.have.length(1);
      expect(stored[0].email).to.equal('A@x.io');
      expect(stored[0].first_name).to.equal('First');
    });

    for (const [name, body, path] of INVALID_CONTACT_BODIES) {
      it(`fails with BAD_REQUEST naming "${path}" for ${name}, and writes nothing`, async () => {
        const { key } = await buildTenant();
        await badRequest(caller(key).contacts.create(body as never), path);
        expect(await contactCount()).to.equal(0);
      });
    }

    for (const [name, body] of BOUNDARY_CONTACT_BODIES) {
      it(`accepts ${name}`, async () => {
        const { key } = await buildTenant();
        const { contact } = await caller(key).contacts.create(body as never);
        expect(contact).to.deep.include(body);
      });
    }

    it('ignores a client-sent id and timestamps (a contact sent back)', async () => {
      const { key } = await buildTenant();
      const { contact } = await caller(key).contacts.create({
        email: 'extra@example.com',
        id: UNKNOWN_ID,
        createdAt: '2000-01-01T00:00:00.000Z',
        updatedAt: '2000-01-01T00:00:00.000Z',
      } as never);

      expect(contact.id).to.match(UUID);
      expect(contact.id).to.not.equal(UNKNOWN_ID);
      expect(contact.createdAt).to.not.equal('2000-01-01T00:00:00.000Z');
      expect(contact.updatedAt).to.not.equal('2000-01-01T00:00:00.000Z');
    });

    it('fails with BAD_REQUEST naming an unknown field, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const error = await badRequest(caller(key).contacts.create({ email: 'extra@example.com', favouriteColour: 'blue' } as never), 'favouriteColour');

      expect(issueDetails(error)).to.deep.equal([{ path: 'favouriteColour', message: 'Unknown field' }]);
      expect(await contactCount(accountId)).to.equal(0);
    });
  });

  describe('upsert', () => {
    it('reports created true for a new email and false for an existing one, merging on update', async () => {
      const { key } = await buildTenant();
      const first = await caller(key).contacts.upsert({ email: 'u@x.io', tags: ['a'], customFields: { n: { x: 1 } } });
      const second = await caller(key).contacts.upsert({ email: 'U@x.io', tags: [], customFields: { n: { y: 2 } } });

      expect(first.created).to.equal(true);
      expect(second.created).to.equal(false);
      expect(second.contact.id).to.equal(first.contact.id);
      expect(second.contact.tags).to.deep.equal(['a']);
      expect(second.contact.customFields).to.deep.equal({ n: { x: 1, y: 2 } });
    });

    it('fails with BAD_REQUEST when email is missing', async () => {
      const { key } = await buildTenant();
      const error = await trpcRejection(caller(key).contacts.upsert({ firstName: 'x' } as never));
      expect(error.code).to.equal('BAD_REQUEST');
    });

    it('updates an existing contact: created false and the merge rules applied, as a later get shows', async () => {
      const { key } = await buildTenant();
      const first = await caller(key).contacts.upsert({
        email: 'Ada@Example.com',
        phone: '+441111',
        firstName: 'Ada',
        lastName: 'Lovelace',
        tags: ['a', 'b'],
        customFields: { plan: 'pro', address: { city: 'Leeds', zip: 'LS1' }, list: [1, 2], gone: { x: 1 } },
        emailSubscriptionStatus: 'unsubscribed',
      });
      expect(first.created).to.equal(true);
      const original = first.contact;
      await sleep(5);

      const second = await caller(key).contacts.upsert({
        email: 'ada@example.com',
        phone: null,
        firstName: 'Augusta',
        tags: [],
        customFields: { address: { city: 'York' }, list: [3], gone: null, extra: true },
        whatsappSubscriptionStatus: 'unsubscribed',
      });

      expect(second).to.have.all.keys('contact', 'created');
      expect(second.created).to.equal(false);
      const merged = second.contact;
      expect(merged).to.deep.include({
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
      });
      expect(Date.parse(merged.updatedAt)).to.be.above(Date.parse(original.updatedAt));

      const { contact: fetched } = await caller(key).contacts.get({ id: original.id });
      expect(fetched).to.deep.equal(merged);
    });

    it('replaces tags when the upsert sends a non-empty list', async () => {
      const { key } = await buildTenant();
      await caller(key).contacts.upsert({ email: 'tags@example.com', tags: ['a', 'b'] });
      const result = await caller(key).contacts.upsert({ email: 'tags@example.com', tags: ['c', 'c', 'a'] });

      expect(result.created).to.equal(false);
      expect(result.contact.tags).to.deep.equal(['c', 'a']);
      const { contact: fetched } = await caller(key).contacts.getByEmail({ email: 'tags@example.com' });
      expect(fetched.tags).to.deep.equal(['c', 'a']);
    });

    it('keeps everything when the upsert sends only the email', async () => {
      const { key } = await buildTenant();
      const { contact: created } = await caller(key).contacts.create({
        email: 'keep@example.com',
        phone: '123',
        firstName: 'F',
        lastName: 'L',
        tags: ['t'],
        customFields: { a: 1 },
      });
      const result = await caller(key).contacts.upsert({ email: 'keep@example.com' });

      expect(result.created).to.equal(false);
      const { updatedAt: _updated, ...unchanged } = created;
      expect(result.contact).to.deep.include(unchanged);
    });

    it('stores null phone and names as null on a new contact', async () => {
      const { key } = await buildTenant();
      const result = await caller(key).contacts.upsert({ email: 'nulls@example.com', phone: null, firstName: null, lastName: null });
      expect(result.created).to.equal(true);
      expect(result.contact).to.deep.include({ phone: null, firstName: null, lastName: null });
    });

    it('fails with BAD_REQUEST naming the field for invalid input, and writes nothing', async () => {
      const { key } = await buildTenant();
      await badRequest(caller(key).contacts.upsert({ firstName: 'no email' } as never), 'email');
      await badRequest(caller(key).contacts.upsert({ email: EMAIL, phone: '1'.repeat(33) }), 'phone');
      await badRequest(caller(key).contacts.upsert({ email: EMAIL, customFields: [] as never }), 'customFields');
      expect(await contactCount()).to.equal(0);
    });

    it('fails with BAD_REQUEST naming customFields when the merge would exceed 100 keys, leaving the contact as it was', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(100) });
      await badRequest(
        caller(key).contacts.upsert({ email: 'full@example.com', firstName: 'Changed', customFields: { extra: 1 } }),
        'customFields',
      );

      const [stored] = await storedContacts(accountId);
      expect(stored.first_name).to.equal(null);
      expect(Object.keys(stored.custom_fields)).to.have.length(100);
    });

    it('fails with BAD_REQUEST naming unknown fields, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const error = await badRequest(caller(key).contacts.upsert({ email: 'x@example.com', fristName: 'X', nickname: 'X' } as never), 'fristName');

      expect(issueDetails(error)).to.deep.equal([
        { path: 'fristName', message: 'Unknown field; did you mean "firstName"?' },
        { path: 'nickname', message: 'Unknown field' },
      ]);
      expect(await contactCount(accountId)).to.equal(0);
    });
  });

  describe('batch', () => {
    it('returns the summary of inserted and updated items', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'old@x.io' });
      const { summary } = await caller(key).contacts.batch({
        contacts: [{ email: 'old@x.io' }, { email: 'new@x.io' }, { email: 'NEW@x.io' }],
      });

      expect(summary).to.deep.equal({ total: 3, inserted: 1, updated: 2 });
      expect(await contactCount()).to.equal(2);
    });

    it('fails with BAD_REQUEST for an empty batch and for 101 items', async () => {
      const { key } = await buildTenant();
      const tooMany = Array.from({ length: 101 }, (_, i) => ({ email: `c${i}@x.io` }));

      expect((await trpcRejection(caller(key).contacts.batch({ contacts: [] }))).code).to.equal('BAD_REQUEST');
      expect((await trpcRejection(caller(key).contacts.batch({ contacts: tooMany }))).code).to.equal('BAD_REQUEST');
      expect(await contactCount()).to.equal(0);
    });

    it('fails with BAD_REQUEST and writes nothing when a merge breaks a limit', async () => {
      const { key, accountId } = await buildTenant();
      const fields = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
      await buildContact(accountId, { email: 'full@x.io', customFields: fields });

      const error = await trpcRejection(
        caller(key).contacts.batch({ contacts: [{ email: 'fresh@x.io' }, { email: 'full@x.io', customFields: { more: 1 } }] }),
      );

      expect(error.code).to.equal('BAD_REQUEST');
      expect(error.message).to.match(/^contacts\.1\.customFields: /);
      expect(await contactCount()).to.equal(1);
    });

    it('accepts exactly 100 items', async () => {
      const { key, accountId } = await buildTenant();
      const contacts = range(100, (i) => `bulk-${i}@example.com`).map((email) => ({ email }));
      const result = await caller(key).contacts.batch({ contacts });

      expect(result).to.deep.equal({ summary: { total: 100, inserted: 100, updated: 0 } });
      expect(await contactCount(accountId)).to.equal(100);
    });

    it('fails with BAD_REQUEST naming "contacts" for an empty batch', async () => {
      const { key } = await buildTenant();
      await badRequest(caller(key).contacts.batch({ contacts: [] }), 'contacts');
    });

    it('fails with BAD_REQUEST naming "contacts" for 101 items, and writes nothing', async () => {
      const { key } = await buildTenant();
      const contacts = range(101, (i) => `bulk-${i}@example.com`).map((email) => ({ email }));
      await badRequest(caller(key).contacts.batch({ contacts }), 'contacts');
      expect(await contactCount()).to.equal(0);
    });

    it('fails with BAD_REQUEST naming "contacts" when the list is missing or not an array', async () => {
      const { key } = await buildTenant();
      await badRequest(caller(key).contacts.batch({} as never), 'contacts');
      await badRequest(caller(key).contacts.batch({ contacts: { email: EMAIL } } as never), 'contacts');
    });

    it('fails with BAD_REQUEST naming contacts.3.email when item 3 has an invalid email, and writes nothing at all', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'existing@example.com', firstName: 'Before' });
      await badRequest(
        caller(key).contacts.batch({
          contacts: [
            { email: 'first@example.com' },
            { email: 'existing@example.com', firstName: 'After' },
            { email: 'third@example.com' },
            { email: 'broken-address' },
            { email: 'fifth@example.com' },
          ],
        }),
        'contacts.3.email',
      );

      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['existing@example.com']);
      expect(stored[0].first_name).to.equal('Before');
    });

    it('fails with BAD_REQUEST naming the item and field for other invalid items', async () => {
      const { key } = await buildTenant();
      const cases: Array<[Record<string, unknown>[], string]> = [
        [[{ email: EMAIL }, { firstName: 'no email' }], 'contacts.1.email'],
        [[{ email: EMAIL }, { email: 'b@example.com' }, { email: 'c@example.com', phone: 'ab' }], 'contacts.2.phone'],
        [[{ email: EMAIL, tags: ['x'.repeat(65)] }], 'contacts.0.tags.0'],
        [[{ email: EMAIL }, 'not an object' as never], 'contacts.1'],
      ];
      for (const [contacts, path] of cases) {
        await badRequest(caller(key).contacts.batch({ contacts } as never), path);
      }
      expect(await contactCount()).to.equal(0);
    });

    it('fails with BAD_REQUEST naming the item whose merge exceeds 100 custom fields, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(90) });
      await badRequest(
        caller(key).contacts.batch({
          contacts: [{ email: 'fresh@example.com' }, { email: 'full@example.com', customFields: keysObject(11, 'new') }],
        }),
        'contacts.1.customFields',
      );

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
      const result = await caller(key).contacts.batch({
        contacts: [{ email: 'MERGE@example.com', phone: null, tags: [], customFields: { a: { y: 2 } } }],
      });

      expect(result.summary).to.deep.equal({ total: 1, inserted: 0, updated: 1 });
      const { contact } = await caller(key).contacts.getByEmail({ email: 'merge@example.com' });
      expect(contact).to.deep.include({
        email: 'merge@example.com',
        phone: '555',
        tags: ['keep'],
        customFields: { a: { x: 1, y: 2 } },
        emailSubscriptionStatus: 'unsubscribed',
      });
    });
  });

  describe('get and getByEmail', () => {
    it('returns the contact by id and by email in any case', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'Find.Me@x.io' });

      expect((await caller(key).contacts.get({ id: created.id })).contact).to.deep.equal(created);
      expect((await caller(key).contacts.getByEmail({ email: 'find.me@X.IO' })).contact).to.deep.equal(created);
    });

    it('fails with NOT_FOUND for an unknown id, a malformed id and an unknown email', async () => {
      const { key } = await buildTenant();
      for (const call of [
        () => caller(key).contacts.get({ id: UNKNOWN_ID }),
        () => caller(key).contacts.get({ id: 'not-a-uuid' }),
        () => caller(key).contacts.getByEmail({ email: 'nobody@x.io' }),
      ]) {
        const error = await trpcRejection(call());
        expect(error.code).to.equal('NOT_FOUND');
        expect(error.message).to.equal('Contact not found');
      }
    });

    it('fails with NOT_FOUND for a contact of another account', async () => {
      const owner = await buildTenant();
      const other = await buildTenant();
      const contact = await buildContact(owner.accountId, { email: 'mine@x.io' });

      expect((await trpcRejection(caller(other.key).contacts.get({ id: contact.id }))).code).to.equal('NOT_FOUND');
      expect((await trpcRejection(caller(other.key).contacts.getByEmail({ email: 'mine@x.io' }))).code).to.equal('NOT_FOUND');
    });

    it('finds the contact whatever the case of the id', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const { contact: fetched } = await caller(key).contacts.get({ id: created.id.toUpperCase() });
      expect(fetched.id).to.equal(created.id);
    });

    it('fails with NOT_FOUND "Contact not found" for an unknown id', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId);
      await rejectedWith(caller(key).contacts.get({ id: UNKNOWN_ID }), 'NOT_FOUND', NOT_FOUND);
    });

    it('fails with NOT_FOUND "Contact not found" for an unknown email', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'someone@example.com' });
      await rejectedWith(caller(key).contacts.getByEmail({ email: 'nobody@example.com' }), 'NOT_FOUND', NOT_FOUND);
    });
  });

  describe('update', () => {
    it('changes only the given fields', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { firstName: 'Ada', lastName: 'Lovelace', phone: '+4411' });
      const { contact } = await caller(key).contacts.update({ id: created.id, firstName: 'Augusta', phone: null });

      expect(contact).to.include({ firstName: 'Augusta', lastName: 'Lovelace', phone: null, email: created.email });
    });

    it('fails with CONFLICT when the new email belongs to another contact', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'taken@x.io' });
      const mine = await buildContact(accountId, { email: 'mine@x.io' });

      const error = await trpcRejection(caller(key).contacts.update({ id: mine.id, email: 'Taken@x.io' }));
      expect(error.code).to.equal('CONFLICT');
      expect(error.message).to.equal('A contact with this email already exists');
      expect((await caller(key).contacts.get({ id: mine.id })).contact.email).to.equal('mine@x.io');
    });

    it('fails with NOT_FOUND for an unknown contact', async () => {
      const { key } = await buildTenant();
      const error = await trpcRejection(caller(key).contacts.update({ id: UNKNOWN_ID, firstName: 'x' }));
      expect(error.code).to.equal('NOT_FOUND');
      expect(error.message).to.equal('Contact not found');
    });

    it('fails with BAD_REQUEST on an invalid phone', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const error = await trpcRejection(caller(key).contacts.update({ id: created.id, phone: 'x'.repeat(33) }));
      expect(error.code).to.equal('BAD_REQUEST');
    });

    it('changes only the given fields: the contact, createdAt kept and updatedAt moved on', async () => {
      const { key } = await buildTenant();
      const { contact: created } = await caller(key).contacts.create({
        email: 'put@example.com',
        phone: '555',
        firstName: 'Ada',
        lastName: 'L',
        tags: ['t'],
        customFields: { a: 1 },
      });
      await sleep(5);
      const { contact: updated } = await caller(key).contacts.update({ id: created.id, firstName: 'Augusta' });

      expect(updated).to.deep.include({ ...created, firstName: 'Augusta', updatedAt: updated.updatedAt });
      expect(updated.createdAt).to.equal(created.createdAt);
      expect(Date.parse(updated.updatedAt)).to.be.above(Date.parse(created.updatedAt));
      const { contact: fetched } = await caller(key).contacts.get({ id: created.id });
      expect(fetched).to.deep.equal(updated);
    });

    it('clears phone, firstName and lastName when sent null', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { phone: '555', firstName: 'F', lastName: 'L' });
      const { contact: updated } = await caller(key).contacts.update({ id: created.id, phone: null, firstName: null, lastName: null });

      expect(updated).to.deep.include({ phone: null, firstName: null, lastName: null });
      const [stored] = await storedContacts(accountId);
      expect(stored).to.include({ phone: null, first_name: null, last_name: null });
    });

    it('replaces tags and customFields instead of merging them', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'], customFields: { keep: { x: 1 }, other: 2 } });
      const { contact: updated } = await caller(key).contacts.update({
        id: created.id,
        tags: ['c', 'c', 'd'],
        customFields: { keep: { y: 2 } },
      });

      expect(updated.tags).to.deep.equal(['c', 'd']);
      expect(updated.customFields).to.deep.equal({ keep: { y: 2 } });
      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.deep.equal(['c', 'd']);
      expect(stored.custom_fields).to.deep.equal({ keep: { y: 2 } });
    });

    it('clears tags and customFields when sent empty', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a'], customFields: { a: 1 } });
      const { contact: updated } = await caller(key).contacts.update({ id: created.id, tags: [], customFields: {} });
      expect(updated.tags).to.deep.equal([]);
      expect(updated.customFields).to.deep.equal({});
    });

    it('changes the email, so that the contact is found by the new one only', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'old@example.com' });
      const { contact: updated } = await caller(key).contacts.update({ id: created.id, email: 'New@Example.com' });

      expect(updated.email).to.equal('New@Example.com');
      expect((await caller(key).contacts.getByEmail({ email: 'new@example.com' })).contact.id).to.equal(created.id);
      await rejectedWith(caller(key).contacts.getByEmail({ email: 'old@example.com' }), 'NOT_FOUND', NOT_FOUND);
    });

    it('lets a contact change the case of its own email', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'case@example.com' });
      const { contact: updated } = await caller(key).contacts.update({ id: created.id, email: 'CASE@example.com' });
      expect(updated.email).to.equal('CASE@example.com');
      expect(await contactCount()).to.equal(1);
    });

    it("fails with CONFLICT when the new email is another contact's, in any case, and changes nothing", async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId, { email: 'taken@example.com' });
      const mine = await buildContact(accountId, { email: 'mine@example.com', firstName: 'Mine' });
      await rejectedWith(
        caller(key).contacts.update({ id: mine.id, email: 'Taken@Example.com', firstName: 'Changed' }),
        'CONFLICT',
        EMAIL_TAKEN,
      );

      const stored = await storedContacts(accountId);
      expect(stored.map((c) => c.email)).to.deep.equal(['mine@example.com', 'taken@example.com']);
      expect(stored[0].first_name).to.equal('Mine');
    });

    it('accepts a whole contact read back from GET, ignoring its read-only fields', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { email: 'roundtrip@example.com', tags: ['a'] });
      const { contact: fetched } = await caller(key).contacts.get({ id: created.id });
      const { contact: updated } = await caller(key).contacts.update({
        ...fetched,
        firstName: 'Round',
        createdAt: '2000-01-01T00:00:00.000Z',
      } as never);

      expect(updated).to.deep.include({ firstName: 'Round', email: 'roundtrip@example.com', tags: ['a'] });
      expect(updated.createdAt).to.equal(created.createdAt);
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
      it(`fails with BAD_REQUEST naming "${path}" for ${name}, and changes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const created = await buildContact(accountId, { email: 'stay@example.com', phone: '555', tags: ['t'] });
        await badRequest(caller(key).contacts.update({ id: created.id, ...body } as never), path);
        const [stored] = await storedContacts(accountId);
        expect(stored).to.deep.include({ email: 'stay@example.com', phone: '555', tags: ['t'] });
      });
    }

    it('fails with NOT_FOUND "Contact not found" for an unknown id', async () => {
      const { key } = await buildTenant();
      await rejectedWith(caller(key).contacts.update({ id: UNKNOWN_ID, firstName: 'x' }), 'NOT_FOUND', NOT_FOUND);
    });
  });

  describe('updateSubscriptions', () => {
    it('changes the given status and keeps the other', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { whatsappSubscriptionStatus: 'unsubscribed' });
      const { contact } = await caller(key).contacts.updateSubscriptions({
        id: created.id,
        emailSubscriptionStatus: 'unsubscribed',
      });

      expect(contact.emailSubscriptionStatus).to.equal('unsubscribed');
      expect(contact.whatsappSubscriptionStatus).to.equal('unsubscribed');
    });

    it('fails with BAD_REQUEST when neither status is given', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const error = await trpcRejection(caller(key).contacts.updateSubscriptions({ id: created.id }));
      expect(error.code).to.equal('BAD_REQUEST');
    });

    it('fails with NOT_FOUND for an unknown contact', async () => {
      const { key } = await buildTenant();
      const error = await trpcRejection(
        caller(key).contacts.updateSubscriptions({ id: UNKNOWN_ID, emailSubscriptionStatus: 'subscribed' }),
      );
      expect(error.code).to.equal('NOT_FOUND');
    });

    it('changes both statuses, in either direction', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { emailSubscriptionStatus: 'unsubscribed' });
      const { contact } = await caller(key).contacts.updateSubscriptions({
        id: created.id,
        emailSubscriptionStatus: 'subscribed',
        whatsappSubscriptionStatus: 'unsubscribed',
      });
      expect(contact).to.deep.include({ emailSubscriptionStatus: 'subscribed', whatsappSubscriptionStatus: 'unsubscribed' });
    });

    it('leaves the other fields alone', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { firstName: 'F', tags: ['t'], customFields: { a: 1 } });
      const { contact } = await caller(key).contacts.updateSubscriptions({ id: created.id, whatsappSubscriptionStatus: 'unsubscribed' });
      expect(contact).to.deep.include({ firstName: 'F', tags: ['t'], customFields: { a: 1 }, email: created.email });
    });

    it('fails with BAD_REQUEST when neither status is given, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      const error = await badRequest(caller(key).contacts.updateSubscriptions({ id: created.id }), '');

      expect(error.message).to.match(/emailSubscriptionStatus or whatsappSubscriptionStatus/);
      const [stored] = await storedContacts(accountId);
      expect(stored.email_subscription_status).to.equal('subscribed');
    });

    it('fails with BAD_REQUEST naming the field for an unknown status value', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      await badRequest(
        caller(key).contacts.updateSubscriptions({ id: created.id, emailSubscriptionStatus: 'maybe' } as never),
        'emailSubscriptionStatus',
      );
    });
  });

  describe('delete', () => {
    it('removes the contact so that get then fails with NOT_FOUND', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);

      expect(await caller(key).contacts.delete({ id: created.id })).to.equal(undefined);
      expect((await trpcRejection(caller(key).contacts.get({ id: created.id }))).code).to.equal('NOT_FOUND');
      expect(await contactCount()).to.equal(0);
    });

    it('fails with NOT_FOUND for an unknown or malformed id', async () => {
      const { key } = await buildTenant();
      expect((await trpcRejection(caller(key).contacts.delete({ id: UNKNOWN_ID }))).code).to.equal('NOT_FOUND');
      expect((await trpcRejection(caller(key).contacts.delete({ id: 'nope' }))).code).to.equal('NOT_FOUND');
    });

    it('deletes only the named contact', async () => {
      const { key, accountId } = await buildTenant();
      const doomed = await buildContact(accountId);
      const kept = await buildContact(accountId);
      expect(await caller(key).contacts.delete({ id: doomed.id })).to.equal(undefined);
      expect((await storedContacts(accountId)).map((c) => c.id)).to.deep.equal([kept.id]);
    });

    it("removes the contact's sequence runs with it", async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const sequence = await buildSequence(accountId);
      await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: contact.email } });
      expect(await storedRuns({ contactId: contact.id })).to.have.length(1);

      expect(await caller(key).contacts.delete({ id: contact.id })).to.equal(undefined);
      expect(await storedRuns({ contactId: contact.id })).to.deep.equal([]);
    });

    it('fails with NOT_FOUND on a second delete of the same contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      await caller(key).contacts.delete({ id: created.id });
      await rejectedWith(caller(key).contacts.delete({ id: created.id }), 'NOT_FOUND', NOT_FOUND);
    });

    it('fails with NOT_FOUND "Contact not found" for an unknown id, deleting nothing', async () => {
      const { key, accountId } = await buildTenant();
      await buildContact(accountId);
      await rejectedWith(caller(key).contacts.delete({ id: UNKNOWN_ID }), 'NOT_FOUND', NOT_FOUND);
      expect(await contactCount()).to.equal(1);
    });
  });

  describe('addTags and removeTags', () => {
    it('appends new tags in request order and removes the named ones', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });

      const added = await caller(key).contacts.addTags({ id: created.id, tags: ['c', 'a', 'd'] });
      expect(added.contact.tags).to.deep.equal(['a', 'b', 'c', 'd']);
      const removed = await caller(key).contacts.removeTags({ id: created.id, tags: ['b', 'zzz'] });
      expect(removed.contact.tags).to.deep.equal(['a', 'c', 'd']);
    });

    it('fails with BAD_REQUEST when adding would exceed 100 tags', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: Array.from({ length: 100 }, (_, i) => `t${i}`) });

      const error = await trpcRejection(caller(key).contacts.addTags({ id: created.id, tags: ['one-more'] }));
      expect(error.code).to.equal('BAD_REQUEST');
      expect((await caller(key).contacts.get({ id: created.id })).contact.tags).to.have.length(100);
    });

    it('fails with BAD_REQUEST for an empty tag list', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId);
      expect((await trpcRejection(caller(key).contacts.addTags({ id: created.id, tags: [] }))).code).to.equal('BAD_REQUEST');
      expect((await trpcRejection(caller(key).contacts.removeTags({ id: created.id, tags: [] }))).code).to.equal(
        'BAD_REQUEST',
      );
    });

    it('fails with NOT_FOUND for an unknown contact', async () => {
      const { key } = await buildTenant();
      expect((await trpcRejection(caller(key).contacts.addTags({ id: UNKNOWN_ID, tags: ['x'] }))).code).to.equal('NOT_FOUND');
      expect((await trpcRejection(caller(key).contacts.removeTags({ id: UNKNOWN_ID, tags: ['x'] }))).code).to.equal(
        'NOT_FOUND',
      );
    });

    it('fails with BAD_REQUEST naming "tags" when adding would exceed 100 tags, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: range(99, (i) => `t${i}`) });
      await badRequest(caller(key).contacts.addTags({ id: created.id, tags: ['new1', 'new2'] }), 'tags');

      const [stored] = await storedContacts(accountId);
      expect(stored.tags).to.have.length(99);
    });

    it('accepts tags already present even on a full contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: range(100, (i) => `t${i}`) });
      const { contact } = await caller(key).contacts.addTags({ id: created.id, tags: ['t5'] });
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
      it(`fails with BAD_REQUEST naming "${path}" for ${name}`, async () => {
        const { key, accountId } = await buildTenant();
        const created = await buildContact(accountId, { tags: ['a'] });
        await badRequest(caller(key).contacts.addTags({ id: created.id, ...body } as never), path);
        const [stored] = await storedContacts(accountId);
        expect(stored.tags).to.deep.equal(['a']);
      });
    }

    it('removes a single tag', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const { contact } = await caller(key).contacts.removeTags({ id: created.id, tags: ['b'] });
      expect(contact.tags).to.deep.equal(['a']);
    });

    it('ignores tags that are not on the contact', async () => {
      const { key, accountId } = await buildTenant();
      const created = await buildContact(accountId, { tags: ['a', 'b'] });
      const { contact } = await caller(key).contacts.removeTags({ id: created.id, tags: ['zzz', 'b', 'yyy'] });
      expect(contact.tags).to.deep.equal(['a']);
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

    it("fails with NOT_FOUND for another account's reads of a contact, by id and by email", async () => {
      const { intruder, contact } = await twoAccounts();
      await rejectedWith(caller(intruder.key).contacts.get({ id: contact.id }), 'NOT_FOUND', NOT_FOUND);
      await rejectedWith(caller(intruder.key).contacts.getByEmail({ email: 'private@example.com' }), 'NOT_FOUND', NOT_FOUND);
    });

    it("fails with NOT_FOUND for another account's writes of a contact, and the contact stays as it was", async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const client = caller(intruder.key);
      const attempts = [
        () => client.contacts.update({ id: contact.id, firstName: 'Intruder' }),
        () => client.contacts.updateSubscriptions({ id: contact.id, emailSubscriptionStatus: 'unsubscribed' }),
        () => client.contacts.addTags({ id: contact.id, tags: ['hacked'] }),
        () => client.contacts.removeTags({ id: contact.id, tags: ['a'] }),
        () => client.contacts.delete({ id: contact.id }),
      ];
      for (const attempt of attempts) await rejectedWith(attempt(), 'NOT_FOUND', NOT_FOUND);

      const { contact: fetched } = await caller(owner.key).contacts.get({ id: contact.id });
      expect(fetched).to.deep.equal(contact);
    });

    it('lets the same email exist in two accounts, each seeing its own', async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const { contact: theirs } = await caller(intruder.key).contacts.create({ email: 'PRIVATE@example.com', firstName: 'Intruder' });

      expect(theirs.id).to.not.equal(contact.id);
      expect((await caller(owner.key).contacts.getByEmail({ email: 'private@example.com' })).contact.firstName).to.equal('Owner');
      expect((await caller(intruder.key).contacts.getByEmail({ email: 'private@example.com' })).contact.firstName).to.equal(
        'Intruder',
      );
    });

    it('creates a separate contact when another account upserts or batches an email it does not own', async () => {
      const { owner, intruder, contact } = await twoAccounts();
      const upsert = await caller(intruder.key).contacts.upsert({ email: 'private@example.com', firstName: 'X' });
      expect(upsert.created).to.equal(true);
      const batch = await caller(intruder.key).contacts.batch({ contacts: [{ email: 'private@example.com', lastName: 'Y' }] });
      expect(batch).to.deep.equal({ summary: { total: 1, inserted: 0, updated: 1 } });

      const ownerRows = await storedContacts(owner.accountId);
      expect(ownerRows).to.have.length(1);
      expect(ownerRows[0]).to.include({ id: contact.id, first_name: 'Owner', last_name: null });
      expect(await contactCount(intruder.accountId)).to.equal(1);
    });
  });

  describe('authentication', () => {
    it('rejects every contacts procedure without a key with UNAUTHORIZED', async () => {
      const { accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'kept@x.io', tags: ['a'] });
      const anonymous = caller();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['create', () => anonymous.contacts.create({ email: 'new@x.io' })],
        ['upsert', () => anonymous.contacts.upsert({ email: 'new@x.io' })],
        ['batch', () => anonymous.contacts.batch({ contacts: [{ email: 'new@x.io' }] })],
        ['get', () => anonymous.contacts.get({ id: contact.id })],
        ['getByEmail', () => anonymous.contacts.getByEmail({ email: 'kept@x.io' })],
        ['update', () => anonymous.contacts.update({ id: contact.id, firstName: 'x' })],
        [
          'updateSubscriptions',
          () => anonymous.contacts.updateSubscriptions({ id: contact.id, emailSubscriptionStatus: 'unsubscribed' }),
        ],
        ['delete', () => anonymous.contacts.delete({ id: contact.id })],
        ['addTags', () => anonymous.contacts.addTags({ id: contact.id, tags: ['b'] })],
        ['removeTags', () => anonymous.contacts.removeTags({ id: contact.id, tags: ['a'] })],
      ];

      for (const [name, call] of calls) {
        const error = await trpcRejection(call());
        expect(error.code, name).to.equal('UNAUTHORIZED');
        expect(error.message, name).to.equal('Missing x-api-key header');
      }
      const [row] = (await testDb().sequelize.query('SELECT email, first_name, tags FROM contacts', {
        type: 'SELECT',
      })) as Array<{ email: string; first_name: string | null; tags: unknown }>;
      expect(await contactCount()).to.equal(1);
      expect(row.email).to.equal('kept@x.io');
      expect(row.first_name).to.equal(null);
    });

    it('checks the key before the input: no key and a bad body is UNAUTHORIZED', async () => {
      const error = await trpcRejection(caller().contacts.create({ email: 'not-an-email' }));
      expect(error.code).to.equal('UNAUTHORIZED');
    });

    it('rejects an unknown, a disabled and an expired key with their messages', async () => {
      const { accountId } = await buildTenant();
      const disabled = await buildApiKey(accountId, { active: false });
      const expired = await buildApiKey(accountId, { expiresAt: new Date(Date.now() - 60_000) });
      const unknown = `svc_${'0'.repeat(40)}`;

      const cases: Array<[string, string]> = [
        [unknown, 'Invalid API key'],
        ['not-a-key', 'Invalid API key'],
        [disabled.key, 'API key is inactive'],
        [expired.key, 'API key has expired'],
      ];
      for (const [key, message] of cases) {
        const error = await trpcRejection(caller(key).contacts.create({ email: 'x@x.io' }));
        expect(error.code).to.equal('UNAUTHORIZED');
        expect(error.message).to.equal(message);
      }
      expect(await contactCount()).to.equal(0);
    });

    it('scopes a valid key to its own account', async () => {
      const owner = await buildTenant();
      const other = await buildTenant();
      await caller(owner.key).contacts.create({ email: 'same@x.io', firstName: 'Owner' });
      const { contact } = await caller(other.key).contacts.create({ email: 'same@x.io', firstName: 'Other' });

      expect(contact.firstName).to.equal('Other');
      expect((await caller(owner.key).contacts.getByEmail({ email: 'same@x.io' })).contact.firstName).to.equal('Owner');
      expect(await contactCount()).to.equal(2);
    });
  });
});
