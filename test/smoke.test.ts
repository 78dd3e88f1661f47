import { expect } from 'chai';
import { api } from './support/app';
import { buildTenant } from './support/factories';

describe('smoke', () => {
  it('creates a contact over REST', async () => {
    const { key } = await buildTenant();
    const res = await api(key).post('/contacts').send({ email: 'a@b.co' });
    expect(res.status).to.equal(201);
    expect(res.body.contact.email).to.equal('a@b.co');
  });
});
