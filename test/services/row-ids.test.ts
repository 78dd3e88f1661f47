import { expect } from 'chai';
import { newRowId } from '../../src/services/ids';
import { api } from '../support/app';
import { buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';

// Rows that lists walk get time-ordered ids (UUIDv7), so that a page's rows sit together in
// the primary key at any table size (src/services/ids.ts).

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondsOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('row ids', () => {
  it('are UUIDv7s that carry the time they were made and grow with it, within a millisecond too', () => {
    const before = Date.now();
    const ids = Array.from({ length: 2_000 }, () => newRowId());
    const after = Date.now();
    for (const id of ids) expect(id).to.match(V7);
    expect(millisecondsOf(ids[0])).to.be.within(before, after);
    expect(millisecondsOf(ids.at(-1)!)).to.be.within(before, after);
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('are what a created, upserted or batched contact gets, with its createdAt in them', async () => {
    const { key } = await buildTenant();
    const created = await api(key).post('/contacts').send({ email: 'v7-created@example.com' }).expect(201);
    const upserted = await api(key).post('/contacts/upsert').send({ email: 'v7-upserted@example.com' }).expect(201);
    const batched = ['v7-a@example.com', 'v7-b@example.com'];
    await api(key)
      .post('/contacts/batch')
      .send({ contacts: batched.map((email) => ({ email })) })
      .expect(201);
    const contacts = [created.body.contact, upserted.body.contact];
    for (const email of batched) contacts.push((await api(key).get(`/contacts/by-email/${email}`).expect(200)).body.contact);
    expect(contacts).to.have.length(4);
    for (const contact of contacts) {
      expect(contact.id).to.match(V7);
      expect(Math.abs(millisecondsOf(contact.id) - Date.parse(contact.createdAt))).to.be.below(1_000);
    }
  });

  it('are what an enrolled contact\'s run gets', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contact = await api(key).post('/contacts').send({ email: 'v7-run@example.com' }).expect(201);
    await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.body.contact.id] }).expect(201);
    const runs = await storedRuns({ sequenceId: sequence.id });
    expect(runs).to.have.length(1);
    expect(runs[0].id).to.match(V7);
  });
});
