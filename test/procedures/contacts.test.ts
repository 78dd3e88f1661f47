import { TRPCError } from '@trpc/server';
import { expect } from 'chai';
import { testDb } from '../support/db';
import { caller } from '../support/app';
import { buildApiKey, buildContact, buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// The contacts procedures through tRPC's createCaller: the same middlewares (auth included) as
// HTTP, with errors as TRPCError codes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

async function contactCount(): Promise<number> {
  const [row] = (await testDb().sequelize.query('SELECT COUNT(*) AS n FROM contacts', { type: 'SELECT' })) as Array<{
    n: number | string;
  }>;
  return Number(row.n);
}

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
