import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';

// Requests that race on one contact or one email: the database decides, nothing is lost, no 500.

interface Row {
  id: string;
  tags: unknown;
  custom_fields: unknown;
}

async function rowsOf(accountId: string): Promise<Row[]> {
  return (await testDb().sequelize.query('SELECT id, tags, custom_fields FROM contacts WHERE account_id = ?', {
    replacements: [accountId],
    type: 'SELECT',
  })) as Row[];
}

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

function statuses(responses: Response[]): number[] {
  return responses.map((res) => res.status);
}

function count(values: number[], wanted: number): number {
  return values.filter((value) => value === wanted).length;
}

describe('Contacts REST API under concurrency', () => {
  it('creates one contact when 20 upserts of a new email race, keeping every custom field', async () => {
    const { key, accountId } = await buildTenant();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(key)
          .post('/contacts/upsert')
          .send({ email: i % 2 ? 'Race@Example.com' : 'race@example.com', customFields: { [`field${i}`]: i } }),
      ),
    );

    const codes = statuses(responses);
    expect(count(codes, 201), JSON.stringify(codes)).to.equal(1);
    expect(count(codes, 200), JSON.stringify(codes)).to.equal(19);
    expect(responses.filter((res) => res.body.created === true)).to.have.length(1);
    expect(new Set(responses.map((res) => res.body.contact.id)).size).to.equal(1);

    const rows = await rowsOf(accountId);
    expect(rows).to.have.length(1);
    expect(rows[0].id).to.equal(responses[0].body.contact.id);
    expect(json(rows[0].custom_fields)).to.deep.equal(
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field${i}`, i])),
    );
  });

  it('answers one 201 and the rest 409 when 10 creates of one email race', async () => {
    const { key, accountId } = await buildTenant();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api(key).post('/contacts').send({ email: 'same@example.com', firstName: `N${i}` })),
    );

    const codes = statuses(responses);
    expect(count(codes, 201), JSON.stringify(codes)).to.equal(1);
    expect(count(codes, 409), JSON.stringify(codes)).to.equal(9);
    responses
      .filter((res) => res.status === 409)
      .forEach((res) => expect(res.body).to.deep.include({ error: 'A contact with this email already exists' }));
    expect(await rowsOf(accountId)).to.have.length(1);
  });

  it('keeps all 10 tags when 10 add-tags requests race on one contact', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { tags: ['base'] });
    const tags = Array.from({ length: 10 }, (_, i) => `tag-${i}`);
    const responses = await Promise.all(tags.map((tag) => api(key).post(`/contacts/${contact.id}/tags`).send({ tags: [tag] })));

    expect(statuses(responses)).to.deep.equal(Array(10).fill(200));
    const [row] = await rowsOf(accountId);
    const stored = json(row.tags) as string[];
    expect(stored).to.have.length(11);
    expect(stored[0]).to.equal('base');
    expect(stored).to.have.members(['base', ...tags]);
    const fetched = await api(key).get(`/contacts/${contact.id}`);
    expect(fetched.body.contact.tags).to.have.members(['base', ...tags]);
  });

  it('loses no change when add-tags and remove-tags race on one contact', async () => {
    const { key, accountId } = await buildTenant();
    const removable = Array.from({ length: 5 }, (_, i) => `old-${i}`);
    const contact = await buildContact(accountId, { tags: removable });
    const added = Array.from({ length: 5 }, (_, i) => `new-${i}`);
    const responses = await Promise.all([
      ...added.map((tag) => api(key).post(`/contacts/${contact.id}/tags`).send({ tags: [tag] })),
      ...removable.map((tag) => api(key).delete(`/contacts/${contact.id}/tags`).send({ tags: [tag] })),
    ]);

    expect(statuses(responses)).to.deep.equal(Array(10).fill(200));
    const [row] = await rowsOf(accountId);
    expect(json(row.tags)).to.have.members(added);
  });

  it('writes each email once when batches with overlapping emails in different orders race', async () => {
    const { key, accountId } = await buildTenant();
    const pool = Array.from({ length: 40 }, (_, i) => `pool-${String(i).padStart(2, '0')}@example.com`);
    await buildContact(accountId, { email: pool[0] });
    // Five overlapping windows of the pool, in forward, reverse and interleaved orders.
    const batches = [
      pool.slice(0, 25),
      pool.slice(10, 35).reverse(),
      pool.slice(15, 40),
      [...pool.slice(0, 40).filter((_, i) => i % 2 === 0)].reverse(),
      pool.slice(5, 30).map((email, i, all) => all[(i * 7) % all.length]),
    ];
    const responses = await Promise.all(
      batches.map((emails, b) =>
        api(key)
          .post('/contacts/batch')
          .send({ contacts: emails.map((email) => ({ email: b % 2 ? email.toUpperCase() : email, customFields: { [`b${b}`]: true } })) }),
      ),
    );

    expect(statuses(responses), JSON.stringify(responses.map((res) => res.body))).to.deep.equal(Array(5).fill(201));
    const summaries = responses.map((res) => res.body.summary);
    summaries.forEach((summary, b) => {
      expect(summary.total).to.equal(batches[b].length);
      expect(summary.inserted + summary.updated).to.equal(batches[b].length);
    });
    const inserted = summaries.reduce((sum, summary) => sum + summary.inserted, 0);
    expect(inserted).to.equal(pool.length - 1);

    const rows = await rowsOf(accountId);
    expect(rows).to.have.length(pool.length);
    // Every batch that named an email left its mark on that one contact.
    const [{ n }] = (await testDb().sequelize.query(
      'SELECT COUNT(DISTINCT email_normalized) AS n FROM contacts WHERE account_id = ?',
      { replacements: [accountId], type: 'SELECT' },
    )) as Array<{ n: number | string }>;
    expect(Number(n)).to.equal(pool.length);
    for (const [b, emails] of batches.entries()) {
      const res = await api(key).get(`/contacts/by-email/${encodeURIComponent(emails[0])}`);
      expect(res.body.contact.customFields, `batch ${b}`).to.have.property(`b${b}`, true);
    }
  });

  it('keeps two accounts apart when they upsert the same email at the same time', async () => {
    const first = await buildTenant();
    const second = await buildTenant();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api(i % 2 ? first.key : second.key)
          .post('/contacts/upsert')
          .send({ email: 'shared@example.com', customFields: { [`k${i}`]: i } }),
      ),
    );

    const codes = statuses(responses);
    expect(count(codes, 201), JSON.stringify(codes)).to.equal(2);
    expect(count(codes, 200), JSON.stringify(codes)).to.equal(8);
    expect(await rowsOf(first.accountId)).to.have.length(1);
    expect(await rowsOf(second.accountId)).to.have.length(1);
    const [firstRow] = await rowsOf(first.accountId);
    expect(Object.keys(json(firstRow.custom_fields) as object)).to.have.members(['k1', 'k3', 'k5', 'k7', 'k9']);
  });
});
