import { expect } from 'chai';
import request from 'supertest';
import { api, testApp } from '../support/app';
import { buildSequence, buildTenant } from '../support/factories';
import { countRows } from '../support/sequence-rows';

// A validation 400 lists each problem once: two checks of one schema that fail with the same
// message at the same path (an email too long before and after lower-casing) are one detail,
// on REST and on tRPC alike (docs/errors.md).

const LONG_EMAIL = `${'a'.repeat(288)}@example.com`;
const TOO_LONG = 'Email must be at most 254 characters';

type Detail = { path: string; message: string };

function distinct(details: Detail[]): Detail[] {
  return details.filter((d, i) => details.findIndex((e) => e.path === d.path && e.message === d.message) === i);
}

describe('Validation details', () => {
  it('lists a 300-character email\'s length problem once over REST, and writes nothing', async () => {
    expect(LONG_EMAIL).to.have.length(300);
    const { key } = await buildTenant();
    const res = await api(key).post('/contacts').send({ email: LONG_EMAIL });
    expect(res.status, res.text).to.equal(400);
    const details = res.body.details as Detail[];
    expect(details.filter((d) => d.path === 'email' && d.message === TOO_LONG)).to.have.length(1);
    expect(details).to.deep.equal(distinct(details));
    expect(res.body.error).to.equal(`email: ${details[0].message}`);
    expect(await countRows('contacts')).to.equal(0);
  });

  it('lists each problem once when several fields fail, keeping their order', async () => {
    const { key } = await buildTenant();
    const res = await api(key).post('/contacts').send({ email: LONG_EMAIL, phone: 'x', tags: 'vip' });
    expect(res.status, res.text).to.equal(400);
    const details = res.body.details as Detail[];
    expect(details).to.deep.equal(distinct(details));
    expect(details.map((d) => d.path)).to.include.members(['email', 'phone', 'tags']);
    expect(details.filter((d) => d.message === TOO_LONG)).to.have.length(1);
  });

  it('lists it once in a nested contact (trigger) too', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    const res = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: LONG_EMAIL } });
    expect(res.status, res.text).to.equal(400);
    expect((res.body.details as Detail[]).filter((d) => d.path === 'contact.email' && d.message === TOO_LONG)).to.have.length(1);
    expect(await countRows('sequence_runs')).to.equal(0);
  });

  it('lists it once over tRPC (data.details), and writes nothing', async () => {
    const { key } = await buildTenant();
    const res = await request(testApp())
      .post('/trpc/contacts.create')
      .set('x-api-key', key)
      .send({ email: LONG_EMAIL });
    expect(res.status, res.text).to.equal(400);
    const details = res.body.error.data.details as Detail[];
    expect(details.filter((d) => d.path === 'email' && d.message === TOO_LONG)).to.have.length(1);
    expect(details).to.deep.equal(distinct(details));
    expect(await countRows('contacts')).to.equal(0);
  });
});
