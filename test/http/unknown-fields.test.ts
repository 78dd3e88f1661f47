import { expect } from 'chai';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { api, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';

// A field a body does not know is a 400 naming it, with the nearest known name, and nothing is
// written (docs/api.md "Requests"); a typo'd field used to be dropped in silence. A contact's
// read-only fields sent back (id, createdAt, updatedAt) are the exception: ignored.

type Detail = { path: string; message: string };
type Table = 'contacts' | 'sequences' | 'sequence_runs' | 'webhook_endpoints' | 'suppressions' | 'activities';

async function rows(table: Table, accountId: string): Promise<number> {
  const [{ n }] = await select<{ n: number | string }>(testDb(), `SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ?`, [accountId]);
  return Number(n);
}

// A 400 validation_failed whose first detail is `path` with `message`, as its `error` says too.
function expectUnknownField(res: request.Response, path: string, message: string): Detail[] {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.code).to.equal('validation_failed');
  const details = res.body.details as Detail[];
  expect(details[0]).to.deep.equal({ path, message });
  expect(res.body.error).to.equal(`${path}: ${message}`);
  return details;
}

const didYouMean = (name: string) => `Unknown field; did you mean "${name}"?`;

describe('Unknown fields in request bodies', () => {
  describe('contacts', () => {
    it('answers 400 to the issue\'s typo\'d contact, naming both fields with their nearest names, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com', firstname: 'Ada', tag: ['vip'] });
      const details = expectUnknownField(res, 'firstname', didYouMean('firstName'));
      expect(details).to.deep.equal([
        { path: 'firstname', message: didYouMean('firstName') },
        { path: 'tag', message: didYouMean('tags') },
      ]);
      expect(await rows('contacts', accountId)).to.equal(0);
    });

    it('names a field with no near name without a suggestion (upsert)', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/contacts/upsert').send({ email: 'ada@example.com', favouriteColour: 'blue' });
      expectUnknownField(res, 'favouriteColour', 'Unknown field');
      expect(await rows('contacts', accountId)).to.equal(0);
    });

    it('names the batch item\'s path, and writes none of the batch', async () => {
      const { key, accountId } = await buildTenant();
      const contacts = [0, 1, 2, 3].map((i) => ({ email: `c${i}@example.com` }));
      const res = await api(key)
        .post('/contacts/batch')
        .send({ contacts: contacts.map((c, i) => (i === 3 ? { ...c, first_name: 'Ada' } : c)) });
      expectUnknownField(res, 'contacts.3.first_name', didYouMean('firstName'));
      expect(await rows('contacts', accountId)).to.equal(0);
    });

    it('answers 400 to an unknown field in an update, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'ada@example.com', lastName: 'Lovelace' });
      const res = await api(key).put(`/contacts/${contact.id}`).send({ lastname: 'Byron' });
      expectUnknownField(res, 'lastname', didYouMean('lastName'));
      const read = await api(key).get(`/contacts/${contact.id}`);
      expect(read.body.contact.lastName).to.equal('Lovelace');
    });

    it('answers 400 to an unknown field in a tags body', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const res = await api(key).post(`/contacts/${contact.id}/tags`).send({ tags: ['vip'], tag: 'x' });
      expectUnknownField(res, 'tag', didYouMean('tags'));
      expect((await api(key).get(`/contacts/${contact.id}`)).body.contact.tags).to.deep.equal([]);
    });

    it('accepts a contact read back whole and sent back (PUT, upsert, batch): its read-only fields are ignored', async () => {
      const { key, accountId } = await buildTenant();
      const created = (await api(key).post('/contacts').send({ email: 'ada@example.com', tags: ['a'] })).body.contact;
      const edited = { ...created, id: '00000000-0000-4000-8000-000000000000', firstName: 'Ada', createdAt: '2000-01-01T00:00:00.000Z' };

      const put = await api(key).put(`/contacts/${created.id}`).send(edited);
      expect(put.status, put.text).to.equal(200);
      expect(put.body.contact).to.include({ id: created.id, firstName: 'Ada', createdAt: created.createdAt });

      const upsert = await api(key).post('/contacts/upsert').send({ ...edited, lastName: 'Lovelace' });
      expect(upsert.status, upsert.text).to.equal(200);
      expect(upsert.body.contact).to.include({ id: created.id, lastName: 'Lovelace', createdAt: created.createdAt });

      const batch = await api(key).post('/contacts/batch').send({ contacts: [{ ...edited, phone: '+447700900123' }] });
      expect(batch.status, batch.text).to.equal(201);
      expect(batch.body.summary).to.deep.equal({ total: 1, inserted: 0, updated: 1 });
      expect(await rows('contacts', accountId)).to.equal(1);
    });
  });

  describe('sequences', () => {
    it('answers 400 to an unknown field of a new sequence, and stores none', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/sequences').send({ name: 'Welcome', stauts: 'active' });
      expectUnknownField(res, 'stauts', didYouMean('status'));
      expect(await rows('sequences', accountId)).to.equal(0);
    });

    it('answers 400 to an unknown field of a trigger\'s contact, at contact.<field>, and enrolls no one', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const res = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: 'ada@example.com', firstname: 'Ada' } });
      expectUnknownField(res, 'contact.firstname', didYouMean('firstName'));
      expect(await rows('contacts', accountId)).to.equal(0);
      expect(await rows('sequence_runs', accountId)).to.equal(0);
    });

    it('ignores a trigger contact\'s read-only fields', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const contact = { email: 'ada@example.com', id: 'x', createdAt: 'x', updatedAt: 'x' };
      const res = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact });
      expect(res.status, res.text).to.equal(202);
      expect(await rows('sequence_runs', accountId)).to.equal(1);
    });

    it('answers 400 to a misspelt enroll list, and enrolls no one', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const res = await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id], contactID: contact.id });
      expectUnknownField(res, 'contactID', didYouMean('contactIds'));
      expect(await rows('sequence_runs', accountId)).to.equal(0);
    });
  });

  describe('webhooks, channels, suppressions, activities and events', () => {
    it('answers 400 to a webhook endpoint with "event" for "events", and stores none', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/webhooks').send({ url: 'https://hooks.example.com/in', event: ['contact.created'] });
      expectUnknownField(res, 'event', didYouMean('events'));
      expect(await rows('webhook_endpoints', accountId)).to.equal(0);
    });

    it('answers 400 to an email channel with "replyto", at its field', async () => {
      const { key } = await buildTenant();
      const before = await api(key).get('/channels/email');
      const res = await api(key).put('/channels/email').send({ from: 'news@shop.example', replyto: 'help@shop.example' });
      expectUnknownField(res, 'replyto', didYouMean('replyTo'));
      expect((await api(key).get('/channels/email')).body).to.deep.equal(before.body);
    });

    it('answers 400 to a suppression item with "adress", at the item\'s path, and adds none', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key)
        .post('/suppressions')
        .send({ suppressions: [{ channel: 'email', address: 'a@example.com' }, { channel: 'email', adress: 'b@example.com' }] });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.details).to.deep.include({ path: 'suppressions.1.adress', message: didYouMean('address') });
      expect(await rows('suppressions', accountId)).to.equal(0);
    });

    it('answers 400 to an activity with "propertys", and stores none', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).post('/activities').send({ contact: { email: 'ada@example.com' }, name: 'order_placed', propertys: {} });
      expectUnknownField(res, 'propertys', didYouMean('properties'));
      expect(await rows('activities', accountId)).to.equal(0);
    });

    it('answers 400 to an unknown query parameter of the events feed', async () => {
      const { key } = await buildTenant();
      expectUnknownField(await api(key).get('/events?limt=5'), 'limt', didYouMean('limit'));
    });
  });

  it('answers the same over tRPC: BAD_REQUEST with the detail at its path', async () => {
    const { key, accountId } = await buildTenant();
    const res = await request(testApp())
      .post('/trpc/contacts.create')
      .set('x-api-key', key)
      .send({ email: 'ada@example.com', firstname: 'Ada' });
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error.message).to.equal(`firstname: ${didYouMean('firstName')}`);
    expect(res.body.error.data).to.deep.include({ appCode: 'validation_failed', details: [{ path: 'firstname', message: didYouMean('firstName') }] });
    expect(await rows('contacts', accountId)).to.equal(0);
  });
});
