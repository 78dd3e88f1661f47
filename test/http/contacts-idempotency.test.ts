import { expect } from 'chai';
import { api } from '../support/app';
import { buildTenant } from '../support/factories';

// A write that changes nothing leaves the contact as it was, updatedAt included, so a retried
// request is harmless and updatedAt means "last changed". A write that changes something
// moves updatedAt forward.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Long enough that a rewrite would carry a later millisecond timestamp.
const GAP_MS = 15;

const ADA = {
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: '+447700900123',
  tags: ['vip', 'newsletter'],
  customFields: { plan: 'pro', address: { city: 'Leeds', zip: 'LS1' } },
  emailSubscriptionStatus: 'subscribed',
  whatsappSubscriptionStatus: 'unsubscribed',
};

async function created(key: string) {
  const res = await api(key).post('/contacts').send(ADA);
  expect(res.status, res.text).to.equal(201);
  await sleep(GAP_MS);
  return res.body.contact as Record<string, unknown> & { id: string; updatedAt: string };
}

async function stored(key: string, id: string) {
  const res = await api(key).get(`/contacts/${id}`);
  expect(res.status).to.equal(200);
  return res.body.contact as Record<string, unknown> & { updatedAt: string };
}

describe('Contacts REST API: writes that change nothing', () => {
  it('answers a repeated upsert with 200 and the same updatedAt, in the response and in a later GET', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key).post('/contacts/upsert').send(ADA);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ contact, created: false });
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('keeps updatedAt when an upsert repeats part of the contact (merge yields the same state)', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key)
      .post('/contacts/upsert')
      .send({ email: 'ADA@example.com', firstName: null, tags: [], customFields: { address: { city: 'Leeds' } } });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect((await stored(key, contact.id)).updatedAt).to.equal(contact.updatedAt);
  });

  it('keeps updatedAt when add-tags names only tags already there', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key).post(`/contacts/${contact.id}/tags`).send({ tags: ['newsletter', 'vip', 'vip'] });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('keeps updatedAt when remove-tags names only tags that are not there', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key).delete(`/contacts/${contact.id}/tags`).send({ tags: ['absent'] });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('keeps updatedAt on a PUT of {}', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key).put(`/contacts/${contact.id}`).send({});
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('keeps updatedAt on a PUT of the values the contact already has', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key).put(`/contacts/${contact.id}`).send(ADA);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('keeps updatedAt on a subscriptions PATCH to the statuses already set', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const res = await api(key)
      .patch(`/contacts/${contact.id}/subscriptions`)
      .send({ emailSubscriptionStatus: 'subscribed', whatsappSubscriptionStatus: 'unsubscribed' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.contact).to.deep.equal(contact);
    expect(await stored(key, contact.id)).to.deep.equal(contact);
  });

  it('moves updatedAt forward, and only updatedAt besides the change, when a write does change the contact', async () => {
    const { key } = await buildTenant();
    const contact = await created(key);

    const upserted = await api(key).post('/contacts/upsert').send({ email: ADA.email, firstName: 'Augusta' });
    expect(upserted.status, upserted.text).to.equal(200);
    const after = upserted.body.contact;
    expect(Date.parse(after.updatedAt)).to.be.above(Date.parse(contact.updatedAt));
    expect(after).to.deep.equal({ ...contact, firstName: 'Augusta', updatedAt: after.updatedAt });
    expect(await stored(key, contact.id)).to.deep.equal(after);

    await sleep(GAP_MS);
    const put = await api(key).put(`/contacts/${contact.id}`).send({ tags: ['vip'] });
    expect(put.status, put.text).to.equal(200);
    expect(Date.parse(put.body.contact.updatedAt)).to.be.above(Date.parse(after.updatedAt));
    expect((await stored(key, contact.id)).updatedAt).to.equal(put.body.contact.updatedAt);
  });

  it('counts an unchanged batch item as updated but leaves its updatedAt alone, while a changed one moves', async () => {
    const { key } = await buildTenant();
    const same = await created(key);
    const otherRes = await api(key).post('/contacts').send({ email: 'grace@example.com', firstName: 'Grace' });
    expect(otherRes.status).to.equal(201);
    const other = otherRes.body.contact;
    await sleep(GAP_MS);

    const res = await api(key)
      .post('/contacts/batch')
      .send({ contacts: [ADA, { email: 'grace@example.com', lastName: 'Hopper' }, { email: 'new@example.com' }] });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.deep.equal({ summary: { total: 3, inserted: 1, updated: 2 } });

    expect(await stored(key, same.id)).to.deep.equal(same);
    const changed = await stored(key, other.id);
    expect(changed.lastName).to.equal('Hopper');
    expect(Date.parse(changed.updatedAt)).to.be.above(Date.parse(other.updatedAt));
  });
});
