import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';

// What a newcomer met first: a wrong method on a real path, and a POST that has nothing to say.

const webhooks = { allowInsecure: true, now: () => new Date() };
const app = () =>
  createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger, webhooks });

describe('REST methods and bodies', () => {
  describe('a method the path does not take', () => {
    it('answers 405 with an Allow header naming the methods the path takes', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const res = await request(app()).patch(`/api/v1/contacts/${contact.id}`).set('x-api-key', key).send({ firstName: 'X' });
      expect(res.status).to.equal(405);
      expect(res.headers.allow).to.equal('DELETE, GET, PUT');
      expect(res.body).to.include({ code: 'method_not_allowed', error: 'Method PATCH is not allowed here; use DELETE, GET, PUT' });
      expect(res.body.requestId).to.be.a('string');
    });

    it('answers 405 on every path of the API that exists under another method', async () => {
      const { key } = await buildTenant();
      const id = '0b7f3c1e-5d2a-4c6b-9e8f-1a2b3c4d5e6f';
      const cases: Array<[method: 'get' | 'put' | 'delete' | 'patch' | 'post', path: string, allow: string]> = [
        ['put', '/contacts', 'GET, POST'],
        ['get', '/contacts/upsert', '(none: GET /contacts/{id} takes it)'],
        ['get', '/contacts/batch', '(none: GET /contacts/{id} takes it)'],
        ['post', `/contacts/${id}`, 'DELETE, GET, PUT'],
        ['put', `/contacts/${id}/subscriptions`, 'PATCH'],
        ['get', `/contacts/${id}/tags`, 'DELETE, POST'],
        ['get', `/sequences/${id}/trigger`, 'POST'],
        ['delete', `/sequences/${id}/enroll`, 'POST'],
        ['delete', '/events', 'GET'],
        ['put', '/webhooks', 'GET, POST'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await request(app())[method](`/api/v1${path}`).set('x-api-key', key);
        // A GET of /contacts/upsert reaches GET /contacts/{id} with "upsert" as the id: a path
        // the API has, whose answer is that no such contact exists.
        if (allow.startsWith('(none')) {
          expect(res.status, `${method} ${path}`).to.equal(404);
          expect(res.body.error, `${method} ${path}`).to.equal('Contact not found');
          continue;
        }
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.headers.allow, `${method} ${path}`).to.equal(allow);
      }
    });

    it('still answers 404 Not found for a path the API does not have, and 401 before either without a key', async () => {
      const { key } = await buildTenant();
      const unknown = await request(app()).patch('/api/v1/nothing-here').set('x-api-key', key);
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.include({ error: 'Not found', code: 'not_found' });
      const anonymous = await request(app()).patch('/api/v1/contacts');
      expect(anonymous.status).to.equal(401);
    });
  });

  describe('a POST with no body', () => {
    it('is an empty object: the webhook test and rotate-secret calls work without a body or Content-Type', async () => {
      const { key } = await buildTenant();
      const created = await request(app()).post('/api/v1/webhooks').set('x-api-key', key).send({ url: 'http://127.0.0.1:9/hook' });
      expect(created.status).to.equal(201);
      const id = created.body.webhook.id as string;
      const test = await request(app()).post(`/api/v1/webhooks/${id}/test`).set('x-api-key', key);
      expect(test.status, test.text).to.equal(202);
      expect(test.body.eventId).to.be.a('string');
      const rotated = await request(app()).post(`/api/v1/webhooks/${id}/rotate-secret`).set('x-api-key', key).set('content-length', '0');
      expect(rotated.status, rotated.text).to.equal(200);
      expect(JSON.stringify(rotated.body)).to.match(/whsec_/);
    });

    it('still answers 415 to a body that is not JSON, and 400 to an empty body a required field needs', async () => {
      const { key } = await buildTenant();
      const text = await request(app()).post('/api/v1/contacts').set('x-api-key', key).type('text/plain').send('email=a@example.com');
      expect(text.status).to.equal(415);
      const empty = await request(app()).post('/api/v1/contacts').set('x-api-key', key);
      expect(empty.status).to.equal(400);
      expect(empty.body.details.map((d: { path: string }) => d.path)).to.include('email');
    });
  });
});
