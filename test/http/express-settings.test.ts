import { expect } from 'chai';
import request from 'supertest';
import { testApp } from '../support/app';
import { buildContact, buildTenant } from '../support/factories';

// Express's defaults that cost per response: no X-Powered-By, no ETag hash of API answers;
// the OpenAPI document keeps a validator (made once) so clients can revalidate it.

describe('express settings', () => {
  it('sends no X-Powered-By and no ETag on API answers, errors and probes', async () => {
    const app = testApp();
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId);
    const responses = [
      await request(app).get(`/api/v1/contacts/${contact.id}`).set('x-api-key', key),
      await request(app).get('/api/v1/contacts/by-email/nobody%40example.com').set('x-api-key', key),
      await request(app).get('/api/v1/contacts/x').set('x-api-key', 'svc_bad'),
      await request(app).get('/healthz'),
    ];
    expect(responses.map((res) => res.status)).to.deep.equal([200, 404, 401, 200]);
    for (const res of responses) {
      expect(res.headers).to.not.have.property('etag');
      expect(res.headers).to.not.have.property('x-powered-by');
    }
  });

  it('answers the OpenAPI document with an ETag, and 304 to a client that has it', async () => {
    const app = testApp();
    const first = await request(app).get('/api/v1/openapi.json');
    expect(first.status).to.equal(200);
    expect(first.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(first.headers.etag).to.match(/^"[A-Za-z0-9_-]{27}"$/);
    expect(first.body).to.have.property('openapi');

    const again = await request(app).get('/api/v1/openapi.json').set('if-none-match', first.headers.etag);
    expect(again.status).to.equal(304);
    expect(again.text).to.equal('');
    const changed = await request(app).get('/api/v1/openapi.json').set('if-none-match', '"something-else"');
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.equal(first.body);
  });
});
