import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ConnectionRefusedError } from 'sequelize';
import request from 'supertest';
import { api, testApp } from '../support/app';
import { withFailingStatements } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { countRows } from '../support/sequence-rows';

// A lost database is the client's cue to retry (503 with Retry-After), on both transports,
// and never says where the database is; a statement that fails for another reason stays a 500.

const UNAVAILABLE = { error: 'Database unavailable; retry shortly', code: 'service_unavailable' };
const ADDRESS = '10.0.0.1';

const refused = () => new ConnectionRefusedError(new Error(`connect ECONNREFUSED ${ADDRESS}:3306`));

const onContacts = (failure: () => Error) => ({ scope: 'contacts' as const, failure });
const everything = (failure: () => Error) => ({ scope: 'all' as const, failure });
const boom = () => new Error('boom');

function expectRestUnavailable(res: request.Response) {
  expect(res.status, res.text).to.equal(503);
  expect(res.headers['retry-after']).to.equal('5');
  expect(res.body).to.deep.include(UNAVAILABLE);
  expect(res.text).to.not.include(ADDRESS);
  expect(res.text).to.not.include('ECONNREFUSED');
}

function expectTrpcUnavailable(res: request.Response) {
  expect(res.status, res.text).to.equal(503);
  expect(res.headers['retry-after']).to.equal('5');
  expect(res.body.error.message).to.equal(UNAVAILABLE.error);
  expect(res.body.error.data).to.include({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
  expect(res.text).to.not.include(ADDRESS);
  expect(res.text).to.not.include('ECONNREFUSED');
}

describe('Database unavailable', () => {
  describe('REST', () => {
    it('answers 503 with Retry-After: 5 to a read when statements on contacts lose the connection', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const res = await withFailingStatements(onContacts(refused), () => api(key).get(`/contacts/${contact.id}`).then((r) => r));
      expectRestUnavailable(res);
    });

    it('answers 503 to a write inside a transaction, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await withFailingStatements(onContacts(refused), () =>
        api(key).post('/contacts').send({ email: 'ada@example.com' }).then((r) => r),
      );
      expectRestUnavailable(res);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it('answers 503 when even the key lookup loses the connection', async () => {
      const { key } = await buildTenant();
      const res = await withFailingStatements(everything(refused), () => api(key).get(`/contacts/${randomUUID()}`).then((r) => r));
      expectRestUnavailable(res);
    });

    it('answers 500 "Internal server error", not 503, when a statement fails for another reason', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const res = await withFailingStatements(onContacts(boom), () =>
        api(key).get(`/contacts/${contact.id}`).then((r) => r),
      );
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'Internal server error' });
      expect(res.headers).to.not.have.property('retry-after');
    });

    it('answers 500, not 503, when the key lookup fails for another reason', async () => {
      const { key } = await buildTenant();
      const res = await withFailingStatements(everything(boom), () =>
        api(key).get(`/contacts/${randomUUID()}`).then((r) => r),
      );
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'Internal server error' });
      expect(res.headers).to.not.have.property('retry-after');
    });

    it('serves normally again once the connection is back', async () => {
      const { key } = await buildTenant();
      await withFailingStatements(everything(refused), () => api(key).post('/contacts').send({ email: 'ada@example.com' }).then((r) => r));
      const res = await api(key).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status, res.text).to.equal(201);
    });
  });

  describe('tRPC', () => {
    const create = (key: string) =>
      request(testApp()).post('/trpc/contacts.create').set('x-api-key', key).send({ email: 'ada@example.com' });

    it('answers contacts.create with 503 SERVICE_UNAVAILABLE and Retry-After when statements on contacts lose the connection', async () => {
      const { key } = await buildTenant();
      const res = await withFailingStatements(onContacts(refused), () => create(key).then((r) => r));
      expectTrpcUnavailable(res);
      expect(res.body.error.data.path).to.equal('contacts.create');
    });

    it('answers 503 SERVICE_UNAVAILABLE in the tRPC envelope when the key lookup loses the connection', async () => {
      const { key } = await buildTenant();
      const res = await withFailingStatements(everything(refused), () => create(key).then((r) => r));
      expectTrpcUnavailable(res);
    });

    it('answers 500 INTERNAL_SERVER_ERROR, not 503, when a statement fails for another reason', async () => {
      const { key } = await buildTenant();
      const res = await withFailingStatements(onContacts(boom), () => create(key).then((r) => r));
      expect(res.status).to.equal(500);
      expect(res.body.error.message).to.equal('Internal server error');
      expect(res.body.error.data.code).to.equal('INTERNAL_SERVER_ERROR');
      expect(res.headers).to.not.have.property('retry-after');
    });
  });
});
