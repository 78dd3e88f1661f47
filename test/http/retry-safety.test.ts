import { expect } from 'chai';
import { ConflictError } from '../../src/errors/app-errors';
import { moveRun } from '../../src/services/sequences/run-transitions';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { countRows, storedEnrollments, storedRuns } from '../support/sequence-rows';

// docs/idempotency.md "Retrying after a 503": a 503 "Database unavailable" may come after the write
// committed, so a client retries it. Each write operation, sent twice as a client's retry
// would send it: the second answer is the one the table in docs/idempotency.md promises, and what is
// stored is what one request would have left.

async function rowOf(key: string, id: string) {
  const res = await api(key).get(`/contacts/${id}`);
  return res.body.contact;
}

async function enrolledContact() {
  const tenant = await buildTenant();
  const sequenceId = (await buildSequence(tenant.accountId)).id;
  const contact = await buildContact(tenant.accountId);
  return { ...tenant, sequenceId, contact };
}

describe('Retrying a write that was applied', () => {
  it('create: 409, the contact as the first request created it', async () => {
    const { key, accountId } = await buildTenant();
    const body = { email: 'ada@example.com', firstName: 'Ada' };
    const first = await api(key).post('/contacts').send(body);
    const retry = await api(key).post('/contacts').send(body);

    expect(first.status).to.equal(201);
    expect(retry.status).to.equal(409);
    expect(retry.body).to.deep.include({ error: 'A contact with this email already exists' });
    expect(await countRows('contacts', accountId)).to.equal(1);
    const found = await api(key).get('/contacts/by-email/ada%40example.com');
    expect(found.body.contact).to.deep.equal(first.body.contact);
  });

  it('upsert: 200 created false, the same contact, updatedAt unmoved', async () => {
    const { key } = await buildTenant();
    const body = { email: 'ada@example.com', tags: ['vip'], customFields: { plan: { tier: 'pro' } } };
    const first = await api(key).post('/contacts/upsert').send(body);
    const retry = await api(key).post('/contacts/upsert').send(body);

    expect(first.status).to.equal(201);
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.equal({ contact: first.body.contact, created: false });
  });

  it('batch: 201, its items counted as updated instead of inserted, the contacts unchanged', async () => {
    const { key, accountId } = await buildTenant();
    const contacts = [
      { email: 'a@example.com', customFields: { n: 1 } },
      { email: 'b@example.com', tags: ['x'] },
      { email: 'A@example.com', customFields: { n: 2, m: { k: true } } },
    ];
    const first = await api(key).post('/contacts/batch').send({ contacts });
    const before = await api(key).get('/contacts/by-email/a%40example.com');
    const retry = await api(key).post('/contacts/batch').send({ contacts });

    expect(first.body.summary).to.deep.equal({ total: 3, inserted: 2, updated: 1 });
    expect(retry.status).to.equal(201);
    expect(retry.body.summary).to.deep.equal({ total: 3, inserted: 0, updated: 3 });
    expect(await countRows('contacts', accountId)).to.equal(2);
    expect((await api(key).get('/contacts/by-email/a%40example.com')).body).to.deep.equal(before.body);
  });

  it('update (email included), subscriptions, add tags, remove tags: 200 and the same contact', async () => {
    const { key, accountId } = await buildTenant();
    const { id } = await buildContact(accountId, { email: 'old@example.com', tags: ['a', 'b'] });
    const writes = [
      () => api(key).put(`/contacts/${id}`).send({ email: 'new@example.com', firstName: 'Ada', phone: null }),
      () => api(key).patch(`/contacts/${id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }),
      () => api(key).post(`/contacts/${id}/tags`).send({ tags: ['c'] }),
      () => api(key).delete(`/contacts/${id}/tags`).send({ tags: ['a'] }),
    ];
    for (const write of writes) {
      const first = await write();
      const retry = await write();
      expect(first.status, first.text).to.equal(200);
      expect(retry.status, retry.text).to.equal(200);
      expect(retry.body).to.deep.equal(first.body);
    }
    expect(await rowOf(key, id)).to.include({ email: 'new@example.com', firstName: 'Ada', emailSubscriptionStatus: 'unsubscribed' });
    expect((await rowOf(key, id)).tags).to.deep.equal(['b', 'c']);
  });

  it('delete: 404 Contact not found', async () => {
    const { key, accountId } = await buildTenant();
    const { id } = await buildContact(accountId);
    const first = await api(key).delete(`/contacts/${id}`);
    const retry = await api(key).delete(`/contacts/${id}`);

    expect(first.status).to.equal(204);
    expect(retry.status).to.equal(404);
    expect(retry.body).to.deep.include({ error: 'Contact not found' });
  });

  it('trigger: 202 active_run_exists for the same contact, one run', async () => {
    const { key, accountId, sequenceId } = await enrolledContact();
    const body = { contact: { email: 'ada@example.com' } };
    const first = await api(key).post(`/sequences/${sequenceId}/trigger`).send(body);
    const retry = await api(key).post(`/sequences/${sequenceId}/trigger`).send(body);

    expect(first.body).to.include({ enrolled: true });
    expect(retry.status).to.equal(202);
    expect(retry.body).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: first.body.contactId });
    expect(await storedRuns({ accountId, contactId: first.body.contactId })).to.have.length(1);
  });

  it('enroll-by-email: 200 active_run_exists for the same contact, one run', async () => {
    const { key, accountId, sequenceId } = await enrolledContact();
    const body = { email: 'ada@example.com', tags: ['webinar'] };
    const first = await api(key).post(`/sequences/${sequenceId}/enroll-by-email`).send(body);
    const retry = await api(key).post(`/sequences/${sequenceId}/enroll-by-email`).send(body);

    expect(first.status).to.equal(201);
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.equal({ enrolled: false, reason: 'active_run_exists', contactId: first.body.contactId });
    expect(await storedRuns({ accountId, contactId: first.body.contactId })).to.have.length(1);
  });

  it('enroll by ids: 201 with the contacts skipped, no second run; a second enrollment record', async () => {
    const { key, accountId, sequenceId, contact } = await enrolledContact();
    const first = await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });
    const retry = await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });

    expect(first.body.summary).to.deep.equal({ processed: 1, successful: 1, failed: 0, skipped: 0 });
    expect(retry.status).to.equal(201);
    expect(retry.body.summary).to.deep.equal({ processed: 1, successful: 0, failed: 0, skipped: 1 });
    expect(await storedRuns({ accountId })).to.have.length(1);
    expect(await storedEnrollments({ sequenceId })).to.have.length(2);
  });

  it('unenroll: 200 with nothing cancelled, the run as the first request left it', async () => {
    const { key, accountId, sequenceId, contact } = await enrolledContact();
    await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });
    const first = await api(key).post(`/sequences/${sequenceId}/unenroll`).send({ contactIds: [contact.id] });
    const runs = await storedRuns({ accountId });
    const retry = await api(key).post(`/sequences/${sequenceId}/unenroll`).send({ contactIds: [contact.id] });

    expect(first.body).to.deep.equal({ cancelled: 1, contactIds: [contact.id] });
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.equal({ cancelled: 0, contactIds: [] });
    expect(await storedRuns({ accountId })).to.deep.equal(runs);
  });

  it('run transition (internal): 409 naming the status the run already has', async () => {
    const { key, accountId, sequenceId, contact } = await enrolledContact();
    await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });
    const [run] = await storedRuns({ accountId });
    await moveRun(testDb(), { accountId, runId: run.id, status: 'running' });
    let refused: unknown;
    try {
      await moveRun(testDb(), { accountId, runId: run.id, status: 'running' });
    } catch (error) {
      refused = error;
    }

    expect(refused).to.be.instanceOf(ConflictError);
    expect((refused as Error).message).to.equal('A run cannot move from running to running');
    expect((await storedRuns({ accountId }))[0].status).to.equal('running');
  });
});
