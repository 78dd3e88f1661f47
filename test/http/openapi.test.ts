import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import type { Express } from 'express';
import { ConnectionRefusedError } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app';
import { execute } from '../../src/db/sql/statements';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { appRouter } from '../../src/routers/app-router';
import { requestHash } from '../../src/services/idempotency/idempotency-keys';
import { silentLogger, testApp } from '../support/app';
import { testDb, withFailingContactQueries, withFailingStatements } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { appWithChannels, channelSettings, publishedTokens } from '../support/channels';

// The published contract (GET /api/v1/openapi.json) against what the service really answers:
// every operation is driven to each status it can produce, and each body is validated with
// the schema the document declares for that path, method and status.

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation = {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: unknown;
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
};
type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Partial<Record<Method, Operation>>>;
  components: { securitySchemes: Record<string, unknown>; responses?: Record<string, { headers?: Record<string, unknown>; content?: unknown }> };
};

// What the API docs say each operation answers on success.
const SUCCESS_STATUSES: Record<string, string[]> = {
  'POST /contacts': ['201'],
  'POST /contacts/upsert': ['200', '201'],
  'POST /contacts/batch': ['201'],
  'POST /contacts/imports': ['202'],
  'GET /contacts/imports': ['200'],
  'GET /contacts/imports/{id}': ['200'],
  'GET /contacts/imports/{id}/errors': ['200'],
  'POST /contacts/imports/{id}/cancel': ['200'],
  'GET /contacts/by-email/{email}': ['200'],
  'GET /contacts/{id}': ['200'],
  'PUT /contacts/{id}': ['200'],
  'DELETE /contacts/{id}': ['204'],
  'PATCH /contacts/{id}/subscriptions': ['200'],
  'POST /contacts/{id}/tags': ['200'],
  'DELETE /contacts/{id}/tags': ['200'],
  'POST /sequences/{id}/trigger': ['202'],
  'POST /sequences/{id}/enroll': ['201'],
  'POST /sequences/{id}/enroll-by-email': ['200', '201'],
  'POST /sequences/{id}/unenroll': ['200'],
  'GET /sequences/{id}/enrollments/{contactId}': ['200'],
  'GET /contacts': ['200'],
  'GET /contacts/{id}/runs': ['200'],
  'GET /contacts/{id}/messages': ['200'],
  'GET /contacts/{id}/activities': ['200'],
  'POST /activities': ['202'],
  'POST /activities/batch': ['202'],
  'GET /sequences': ['200'],
  'GET /sequences/{id}': ['200'],
  'POST /sequences': ['201'],
  'PATCH /sequences/{id}': ['200'],
  'DELETE /sequences/{id}': ['204'],
  'GET /sequences/{id}/runs/{runId}': ['200'],
  'GET /sequences/{id}/stats': ['200'],
  'POST /sequences/{id}/preview': ['200'],
  'POST /sequences/{id}/runs/{runId}/pause': ['200'],
  'POST /sequences/{id}/runs/{runId}/resume': ['200'],
  'GET /sequences/{id}/runs': ['200'],
  'GET /events': ['200'],
  'POST /webhooks': ['201'],
  'GET /webhooks': ['200'],
  'GET /webhooks/{id}': ['200'],
  'PATCH /webhooks/{id}': ['200'],
  'DELETE /webhooks/{id}': ['204'],
  'POST /webhooks/{id}/rotate-secret': ['200'],
  'GET /webhooks/{id}/deliveries': ['200'],
  'POST /webhooks/{id}/test': ['202'],
  'GET /channels/pauses': ['200'],
  'GET /channels/email': ['200'],
  'PUT /channels/email': ['200'],
  'GET /channels/email/domains': ['200'],
  'POST /channels/email/domains': ['200', '201'],
  'POST /channels/email/domains/{domain}/verify': ['200'],
  'DELETE /channels/email/domains/{domain}': ['204'],
  'GET /channels/whatsapp': ['200'],
  'PUT /channels/whatsapp': ['200'],
  'POST /suppressions': ['201'],
  'GET /suppressions': ['200'],
  'GET /suppressions/{channel}/{address}': ['200'],
  'DELETE /suppressions/{channel}/{address}': ['204'],
};

// Declared statuses no request can produce, and why; anything else declared must be exercised.
const UNREACHABLE: Record<string, string> = {};
// 500 and 503 are the same handler on every path: checked on one operation each.
const SERVER_ERRORS_CHECKED_ON = 'GET /contacts/{id}';

interface Fixture {
  key: string;
  accountId: string;
  contact: { id: string; email: string };
  other: { id: string; email: string };
  active: { id: string };
  paused: { id: string };
}

type Send = (f: Fixture) => PromiseLike<request.Response>;
interface Case {
  status: number;
  when: string;
  send: Send;
}

const fresh = () => `new-${randomUUID().slice(0, 8)}@example.com`;
const unknownId = () => randomUUID();
const OVER_1_MIB = JSON.stringify({ email: 'big@example.com', customFields: { blob: 'x'.repeat(1024 * 1024 + 10) } });

let channelsApp: Express | undefined;
// Sending domains' lookups answer each domain's own token: an added domain is verified at once.
const withChannels = () => (channelsApp ??= appWithChannels(channelSettings({ resolveTxt: publishedTokens })));
let httpBaseApp: Express | undefined;
const withHttpBase = () => (httpBaseApp ??= appWithChannels(channelSettings({ publicBaseUrl: 'http://localhost:3000' })));
const newDomain = () => `d-${randomUUID().slice(0, 8)}.example`;
async function addedDomain(f: Fixture): Promise<string> {
  const domain = newDomain();
  const res = await rest(f.key, withChannels()).post('/channels/email/domains').send({ domain });
  expect(res.status, 'setting up a sending domain').to.equal(201);
  return domain;
}

function rest(key: string | undefined, app: Express = testApp()) {
  const agent = request(app);
  const call = (method: Method, url: string) => {
    const test = agent[method](`/api/v1${url}`);
    return key ? test.set('x-api-key', key) : test;
  };
  return {
    get: (url: string) => call('get', url),
    post: (url: string) => call('post', url),
    put: (url: string) => call('put', url),
    patch: (url: string) => call('patch', url),
    delete: (url: string) => call('delete', url),
    call,
  };
}

// Starts a run for the contact through the API, as a client would.
async function enrolled(f: Fixture) {
  const res = await rest(f.key).post(`/sequences/${f.active.id}/trigger`).send({ contact: { email: f.contact.email } });
  expect(res.status, 'setting up a run').to.equal(202);
  return res.body as { runId: string };
}

// A sequence with an email step (`mail`) and a whatsapp step (`chat`), for the preview.
async function messageSequence(f: Fixture): Promise<string> {
  const res = await rest(f.key)
    .post('/sequences')
    .send({
      name: 'Messages',
      steps: [
        { id: 'mail', type: 'email', subject: 'Hi {{ contact.firstName }}', html: '<p>Hello {{ contact.email }}</p>' },
        { id: 'chat', type: 'whatsapp', template: { name: 'hello', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{ contact.email }}' }] }] } },
        { id: 'end', type: 'exit' },
      ],
    });
  expect(res.status, 'setting up a sequence with message steps').to.equal(201);
  return res.body.sequence.id as string;
}

// An address on the account's suppression list, added through the API.
async function suppressed(f: Fixture): Promise<string> {
  const address = fresh();
  const res = await rest(f.key).post('/suppressions').send({ suppressions: [{ channel: 'email', address }] });
  expect(res.status, 'setting up a suppression').to.equal(201);
  return address;
}

// A queued contact import, uploaded as text/csv.
async function queuedImport(f: Fixture): Promise<string> {
  const res = await rest(f.key).post('/contacts/imports').set('content-type', 'text/csv').send('email,firstName\nada@example.com,Ada\n');
  expect(res.status, 'setting up an import').to.equal(202);
  return res.body.import.id as string;
}

// A tenant whose account may have no active run at all.
async function atLimit() {
  const tenant = await buildTenant({ maxActiveRuns: 0 });
  const sequence = await buildSequence(tenant.accountId, 'active');
  return { key: tenant.key, sequenceId: sequence.id };
}

// Operation-specific outcomes. 401, 413, 415 and 429 are added for every operation below.
const CASES: Record<string, Case[]> = {
  'POST /contacts/imports': [
    { status: 202, when: 'a CSV file is uploaded as text/csv', send: (f) => rest(f.key).post('/contacts/imports?tags=imported').set('content-type', 'text/csv').send('email;Plan\r\nada@example.com;pro\r\n') },
    { status: 202, when: 'the CSV comes in a JSON body', send: (f) => rest(f.key).post('/contacts/imports').send({ csv: 'email\nada@example.com\n', tags: ['imported'] }) },
    { status: 400, when: 'no column maps to email', send: (f) => rest(f.key).post('/contacts/imports').set('content-type', 'text/csv').send('name\nAda\n') },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).post(`/contacts/imports?sequenceId=${unknownId()}`).set('content-type', 'text/csv').send('email\na@x.io\n') },
    { status: 409, when: 'the sequence is not active', send: (f) => rest(f.key).post(`/contacts/imports?sequenceId=${f.paused.id}`).set('content-type', 'text/csv').send('email\na@x.io\n') },
  ],
  'GET /contacts/imports': [
    { status: 200, when: 'the account has imports', send: async (f) => (await queuedImport(f), rest(f.key).get('/contacts/imports')) },
  ],
  'GET /contacts/imports/{id}': [
    { status: 200, when: 'the import exists', send: async (f) => rest(f.key).get(`/contacts/imports/${await queuedImport(f)}`) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).get(`/contacts/imports/${unknownId()}`) },
  ],
  'GET /contacts/imports/{id}/errors': [
    { status: 200, when: 'the import exists', send: async (f) => rest(f.key).get(`/contacts/imports/${await queuedImport(f)}/errors`) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).get(`/contacts/imports/${unknownId()}/errors`) },
  ],
  'POST /contacts/imports/{id}/cancel': [
    { status: 200, when: 'the import is queued', send: async (f) => rest(f.key).post(`/contacts/imports/${await queuedImport(f)}/cancel`) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).post(`/contacts/imports/${unknownId()}/cancel`) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key).post(`/contacts/imports/${unknownId()}/cancel`).type('text/plain').send('x') },
  ],
  'POST /contacts': [
    { status: 201, when: 'the email is new', send: (f) => rest(f.key).post('/contacts').send({ email: fresh(), tags: ['a'] }) },
    { status: 400, when: 'the email is invalid', send: (f) => rest(f.key).post('/contacts').send({ email: 'nope' }) },
    { status: 409, when: 'the email exists', send: (f) => rest(f.key).post('/contacts').send({ email: f.contact.email }) },
  ],
  'POST /contacts/upsert': [
    { status: 201, when: 'the email is new', send: (f) => rest(f.key).post('/contacts/upsert').send({ email: fresh() }) },
    { status: 200, when: 'the email exists', send: (f) => rest(f.key).post('/contacts/upsert').send({ email: f.contact.email, firstName: 'Ada' }) },
    { status: 400, when: 'the phone is too short', send: (f) => rest(f.key).post('/contacts/upsert').send({ email: fresh(), phone: '1' }) },
  ],
  'POST /contacts/batch': [
    {
      status: 201,
      when: 'the batch mixes new and existing emails',
      send: (f) => rest(f.key).post('/contacts/batch').send({ contacts: [{ email: fresh() }, { email: f.contact.email }] }),
    },
    { status: 400, when: 'the batch is empty', send: (f) => rest(f.key).post('/contacts/batch').send({ contacts: [] }) },
    {
      status: 400,
      when: 'one item is invalid',
      send: (f) => rest(f.key).post('/contacts/batch').send({ contacts: [{ email: fresh() }, { email: 'bad' }] }),
    },
  ],
  'GET /contacts/by-email/{email}': [
    { status: 200, when: 'the contact exists', send: (f) => rest(f.key).get(`/contacts/by-email/${encodeURIComponent(f.contact.email)}`) },
    { status: 404, when: 'no contact has the email', send: (f) => rest(f.key).get(`/contacts/by-email/${encodeURIComponent(fresh())}`) },
  ],
  'GET /contacts/{id}': [
    { status: 200, when: 'the contact exists', send: (f) => rest(f.key).get(`/contacts/${f.contact.id}`) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).get(`/contacts/${unknownId()}`) },
    { status: 404, when: 'the id is malformed', send: (f) => rest(f.key).get('/contacts/not-a-uuid') },
  ],
  'PUT /contacts/{id}': [
    { status: 200, when: 'fields change', send: (f) => rest(f.key).put(`/contacts/${f.contact.id}`).send({ lastName: 'Lovelace', phone: null }) },
    { status: 400, when: 'the email is invalid', send: (f) => rest(f.key).put(`/contacts/${f.contact.id}`).send({ email: 'nope' }) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).put(`/contacts/${unknownId()}`).send({ firstName: 'x' }) },
    { status: 409, when: 'the email belongs to another contact', send: (f) => rest(f.key).put(`/contacts/${f.contact.id}`).send({ email: f.other.email }) },
  ],
  'DELETE /contacts/{id}': [
    { status: 204, when: 'the contact exists', send: (f) => rest(f.key).delete(`/contacts/${f.contact.id}`) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).delete(`/contacts/${unknownId()}`) },
  ],
  'PATCH /contacts/{id}/subscriptions': [
    {
      status: 200,
      when: 'a status is given',
      send: (f) => rest(f.key).patch(`/contacts/${f.contact.id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }),
    },
    { status: 400, when: 'no status is given', send: (f) => rest(f.key).patch(`/contacts/${f.contact.id}/subscriptions`).send({}) },
    {
      status: 404,
      when: 'the id is unknown',
      send: (f) => rest(f.key).patch(`/contacts/${unknownId()}/subscriptions`).send({ whatsappSubscriptionStatus: 'subscribed' }),
    },
  ],
  'POST /contacts/{id}/tags': [
    { status: 200, when: 'tags are given', send: (f) => rest(f.key).post(`/contacts/${f.contact.id}/tags`).send({ tags: ['new', 'vip'] }) },
    { status: 400, when: 'the list is empty', send: (f) => rest(f.key).post(`/contacts/${f.contact.id}/tags`).send({ tags: [] }) },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).post(`/contacts/${unknownId()}/tags`).send({ tags: ['x'] }) },
  ],
  'DELETE /contacts/{id}/tags': [
    { status: 200, when: 'tags are given', send: (f) => rest(f.key).delete(`/contacts/${f.contact.id}/tags`).send({ tags: ['vip', 'absent'] }) },
    { status: 400, when: 'the body has no tags', send: (f) => rest(f.key).delete(`/contacts/${f.contact.id}/tags`).send({}) },
    { status: 400, when: 'the body is not JSON', send: (f) => rest(f.key).delete(`/contacts/${f.contact.id}/tags`).type('form').send('tags=vip') },
    { status: 404, when: 'the id is unknown', send: (f) => rest(f.key).delete(`/contacts/${unknownId()}/tags`).send({ tags: ['x'] }) },
  ],
  'POST /sequences/{id}/trigger': [
    {
      status: 202,
      when: 'the contact is enrolled',
      send: (f) => rest(f.key).post(`/sequences/${f.active.id}/trigger`).send({ contact: { email: fresh(), tags: ['t'] } }),
    },
    {
      status: 202,
      when: 'the contact already has an active run',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).post(`/sequences/${f.active.id}/trigger`).send({ contact: { email: f.contact.email } });
      },
    },
    {
      status: 202,
      when: 'the account\'s active-run limit is reached',
      send: async () => {
        const { key, sequenceId } = await atLimit();
        return rest(key).post(`/sequences/${sequenceId}/trigger`).send({ contact: { email: fresh() } });
      },
    },
    { status: 400, when: 'the contact is missing', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/trigger`).send({}) },
    {
      status: 404,
      when: 'the sequence is unknown',
      send: (f) => rest(f.key).post(`/sequences/${unknownId()}/trigger`).send({ contact: { email: fresh() } }),
    },
    {
      status: 409,
      when: 'the sequence is paused',
      send: (f) => rest(f.key).post(`/sequences/${f.paused.id}/trigger`).send({ contact: { email: fresh() } }),
    },
  ],
  'POST /sequences/{id}/enroll': [
    {
      status: 201,
      when: 'ids are enrolled, skipped and failed',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key)
          .post(`/sequences/${f.active.id}/enroll`)
          .send({ contactIds: [f.contact.id, f.other.id, unknownId()] });
      },
    },
    { status: 400, when: 'an id is not a UUID', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/enroll`).send({ contactIds: ['nope'] }) },
    {
      status: 404,
      when: 'the sequence is unknown',
      send: (f) => rest(f.key).post(`/sequences/${unknownId()}/enroll`).send({ contactIds: [f.contact.id] }),
    },
    {
      status: 409,
      when: 'the sequence is paused',
      send: (f) => rest(f.key).post(`/sequences/${f.paused.id}/enroll`).send({ contactIds: [f.contact.id] }),
    },
  ],
  'POST /sequences/{id}/enroll-by-email': [
    { status: 201, when: 'the contact is enrolled', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/enroll-by-email`).send({ email: fresh() }) },
    {
      status: 200,
      when: 'the contact already has an active run',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).post(`/sequences/${f.active.id}/enroll-by-email`).send({ email: f.contact.email });
      },
    },
    {
      status: 200,
      when: 'the account\'s active-run limit is reached',
      send: async () => {
        const { key, sequenceId } = await atLimit();
        return rest(key).post(`/sequences/${sequenceId}/enroll-by-email`).send({ email: fresh() });
      },
    },
    { status: 400, when: 'the email is invalid', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/enroll-by-email`).send({ email: 'x' }) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).post(`/sequences/${unknownId()}/enroll-by-email`).send({ email: fresh() }) },
    { status: 409, when: 'the sequence is paused', send: (f) => rest(f.key).post(`/sequences/${f.paused.id}/enroll-by-email`).send({ email: fresh() }) },
  ],
  'POST /sequences/{id}/unenroll': [
    {
      status: 200,
      when: 'a run is cancelled',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).post(`/sequences/${f.active.id}/unenroll`).send({ contactIds: [f.contact.id, f.other.id] });
      },
    },
    { status: 200, when: 'the sequence is paused', send: (f) => rest(f.key).post(`/sequences/${f.paused.id}/unenroll`).send({ contactIds: [f.contact.id] }) },
    { status: 400, when: 'the list is empty', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/unenroll`).send({ contactIds: [] }) },
    {
      status: 404,
      when: 'the sequence is unknown',
      send: (f) => rest(f.key).post(`/sequences/${unknownId()}/unenroll`).send({ contactIds: [f.contact.id] }),
    },
  ],
  'GET /contacts': [
    { status: 200, when: 'contacts match', send: (f) => rest(f.key).get('/contacts?limit=1&q=' + encodeURIComponent(f.contact.email)) },
    { status: 200, when: 'sort=updatedAt is caught up', send: (f) => rest(f.key).get('/contacts?limit=1&sort=updatedAt') },
    { status: 400, when: 'the limit is out of range', send: (f) => rest(f.key).get('/contacts?limit=500') },
    { status: 400, when: 'the cursor is not one', send: (f) => rest(f.key).get('/contacts?cursor=nope') },
  ],
  'GET /contacts/{id}/runs': [
    {
      status: 200,
      when: 'the contact has a run',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).get(`/contacts/${f.contact.id}/runs?active=true`);
      },
    },
    { status: 400, when: 'the status is unknown', send: (f) => rest(f.key).get(`/contacts/${f.contact.id}/runs?status=done`) },
    { status: 404, when: 'the contact is unknown', send: (f) => rest(f.key).get(`/contacts/${unknownId()}/runs`) },
  ],
  'GET /contacts/{id}/activities': [
    {
      status: 200,
      when: 'the contact has activities',
      send: async (f) => {
        await rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'seen', properties: { a: 1 } });
        return rest(f.key).get(`/contacts/${f.contact.id}/activities?limit=1`);
      },
    },
    { status: 400, when: 'the limit is over 100', send: (f) => rest(f.key).get(`/contacts/${f.contact.id}/activities?limit=101`) },
    { status: 404, when: 'the contact is unknown', send: (f) => rest(f.key).get(`/contacts/${unknownId()}/activities`) },
  ],
  'POST /activities': [
    { status: 202, when: 'the contact is new', send: (f) => rest(f.key).post('/activities').send({ contact: { email: fresh() }, name: 'order_placed', id: 'o-1' }) },
    {
      status: 202,
      when: 'the id is stored with the same name and properties',
      send: async (f) => {
        await rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'seen', id: 'dup' });
        return rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'seen', id: 'dup' });
      },
    },
    { status: 400, when: 'the name is empty', send: (f) => rest(f.key).post('/activities').send({ contact: { email: fresh() }, name: '' }) },
    { status: 404, when: 'the contact id is unknown', send: (f) => rest(f.key).post('/activities').send({ contact: { id: unknownId() }, name: 'seen' }) },
    {
      status: 409,
      when: 'the id is stored with another name',
      send: async (f) => {
        await rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'seen', id: 'taken' });
        return rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'other', id: 'taken' });
      },
    },
  ],
  'POST /activities/batch': [
    {
      status: 202,
      when: 'the items are new',
      send: (f) => rest(f.key).post('/activities/batch').send({ activities: [{ contact: { email: fresh() }, name: 'a' }, { contact: { id: f.contact.id }, name: 'b' }] }),
    },
    { status: 400, when: 'an item is bad', send: (f) => rest(f.key).post('/activities/batch').send({ activities: [{ contact: { id: f.contact.id }, name: 'a', id: 'no spaces' }] }) },
    {
      status: 409,
      when: 'an item\'s id is stored with another name',
      send: async (f) => {
        await rest(f.key).post('/activities').send({ contact: { id: f.contact.id }, name: 'seen', id: 'taken' });
        return rest(f.key).post('/activities/batch').send({ activities: [{ contact: { id: f.contact.id }, name: 'other', id: 'taken' }] });
      },
    },
  ],
  'GET /contacts/{id}/messages': [
    { status: 200, when: 'the contact exists', send: (f) => rest(f.key).get(`/contacts/${f.contact.id}/messages?limit=1`) },
    { status: 400, when: 'the cursor is not one', send: (f) => rest(f.key).get(`/contacts/${f.contact.id}/messages?cursor=nope`) },
    { status: 404, when: 'the contact is unknown', send: (f) => rest(f.key).get(`/contacts/${unknownId()}/messages`) },
  ],
  'GET /sequences': [
    { status: 200, when: 'sequences exist', send: (f) => rest(f.key).get('/sequences?limit=1') },
    { status: 400, when: 'the status is unknown', send: (f) => rest(f.key).get('/sequences?status=done') },
  ],
  'GET /sequences/{id}': [
    { status: 200, when: 'the sequence exists', send: (f) => rest(f.key).get(`/sequences/${f.paused.id}`) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).get(`/sequences/${unknownId()}`) },
  ],
  'POST /sequences': [
    { status: 201, when: 'the definition is good', send: (f) => rest(f.key).post('/sequences').send({ name: 'New', steps: [{ type: 'exit' }] }) },
    { status: 400, when: 'a step has an unknown type', send: (f) => rest(f.key).post('/sequences').send({ name: 'New', steps: [{ type: 'teleport' }] }) },
    {
      status: 409,
      when: 'it would be active with an email step that has no sender',
      send: (f) => rest(f.key, withChannels()).post('/sequences').send({ name: 'New', status: 'active', steps: [{ type: 'email', subject: 'Hi', html: '<p>Hi</p>' }] }),
    },
  ],
  'PATCH /sequences/{id}': [
    { status: 200, when: 'the sequence exists', send: (f) => rest(f.key).patch(`/sequences/${f.paused.id}`).send({ name: 'Renamed' }) },
    { status: 400, when: 'a wait is out of range', send: (f) => rest(f.key).patch(`/sequences/${f.paused.id}`).send({ steps: [{ type: 'wait', duration: 'PT0S' }] }) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).patch(`/sequences/${unknownId()}`).send({ name: 'Renamed' }) },
    {
      status: 409,
      when: 'it would be made active with an email step that has no sender',
      send: async (f) => {
        const draft = await rest(f.key).post('/sequences').send({ name: 'No sender', steps: [{ type: 'email', subject: 'Hi', html: '<p>Hi</p>' }] });
        return rest(f.key, withChannels()).patch(`/sequences/${draft.body.sequence.id}`).send({ status: 'active' });
      },
    },
  ],
  'DELETE /sequences/{id}': [
    {
      status: 204,
      when: 'the sequence never had a run',
      send: async (f) => rest(f.key).delete(`/sequences/${(await rest(f.key).post('/sequences').send({ name: 'Scratch' })).body.sequence.id}`),
    },
    { status: 400, when: 'the id is not a UUID', send: (f) => rest(f.key).delete('/sequences/not-a-uuid') },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).delete(`/sequences/${unknownId()}`) },
    {
      status: 409,
      when: 'the sequence has runs',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).delete(`/sequences/${f.active.id}`);
      },
    },
  ],
  'GET /sequences/{id}/runs/{runId}': [
    {
      status: 200,
      when: 'the run exists',
      send: async (f) => rest(f.key).get(`/sequences/${f.active.id}/runs/${(await enrolled(f)).runId}`),
    },
    { status: 404, when: 'the run is unknown', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/runs/${unknownId()}`) },
  ],
  'GET /sequences/{id}/stats': [
    { status: 200, when: 'the sequence exists', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/stats?days=7`) },
    { status: 400, when: 'days is out of range', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/stats?days=91`) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).get(`/sequences/${unknownId()}/stats`) },
  ],
  'POST /sequences/{id}/runs/{runId}/pause': [
    {
      status: 200,
      when: 'the run is pending',
      send: async (f) => rest(f.key).post(`/sequences/${f.active.id}/runs/${(await enrolled(f)).runId}/pause`),
    },
    {
      status: 409,
      when: 'the run is already paused',
      send: async (f) => {
        const { runId } = await enrolled(f);
        await rest(f.key).post(`/sequences/${f.active.id}/runs/${runId}/pause`);
        return rest(f.key).post(`/sequences/${f.active.id}/runs/${runId}/pause`);
      },
    },
    { status: 404, when: 'the run is unknown', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/runs/${unknownId()}/pause`) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/runs/${unknownId()}/pause`).type('text/plain').send('x') },
  ],
  'POST /sequences/{id}/runs/{runId}/resume': [
    {
      status: 200,
      when: 'the run is paused',
      send: async (f) => {
        const { runId } = await enrolled(f);
        await rest(f.key).post(`/sequences/${f.active.id}/runs/${runId}/pause`);
        return rest(f.key).post(`/sequences/${f.active.id}/runs/${runId}/resume`);
      },
    },
    { status: 409, when: 'the run is pending', send: async (f) => rest(f.key).post(`/sequences/${f.active.id}/runs/${(await enrolled(f)).runId}/resume`) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).post(`/sequences/${unknownId()}/runs/${unknownId()}/resume`) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key).post(`/sequences/${f.active.id}/runs/${unknownId()}/resume`).type('text/plain').send('x') },
  ],
  'GET /sequences/{id}/runs': [
    {
      status: 200,
      when: 'the sequence has a run',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).get(`/sequences/${f.active.id}/runs?status=pending`);
      },
    },
    { status: 400, when: 'active is not a flag', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/runs?active=yes`) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).get(`/sequences/${unknownId()}/runs`) },
  ],
  'GET /sequences/{id}/enrollments/{contactId}': [
    {
      status: 200,
      when: 'the contact has an active run',
      send: async (f) => {
        await enrolled(f);
        return rest(f.key).get(`/sequences/${f.active.id}/enrollments/${f.contact.id}`);
      },
    },
    { status: 200, when: 'the contact was never enrolled', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/enrollments/${f.other.id}`) },
    { status: 404, when: 'the contact is unknown', send: (f) => rest(f.key).get(`/sequences/${f.active.id}/enrollments/${unknownId()}`) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).get(`/sequences/${unknownId()}/enrollments/${f.contact.id}`) },
  ],
  'POST /sequences/{id}/preview': [
    {
      status: 200,
      when: 'the step is an email step',
      send: async (f) => rest(f.key, withChannels()).post(`/sequences/${await messageSequence(f)}/preview`).send({ stepId: 'mail', contactId: f.contact.id }),
    },
    {
      status: 200,
      when: 'the step is a whatsapp step',
      send: async (f) => rest(f.key, withChannels()).post(`/sequences/${await messageSequence(f)}/preview`).send({ stepId: 'chat', contactId: f.contact.id }),
    },
    {
      status: 400,
      when: 'the step is not a message step',
      send: async (f) => rest(f.key).post(`/sequences/${await messageSequence(f)}/preview`).send({ stepId: 'end', contactId: f.contact.id }),
    },
    {
      status: 409,
      when: 'the server has no secrets key to sign the unsubscribe link',
      send: async (f) => rest(f.key).post(`/sequences/${await messageSequence(f)}/preview`).send({ stepId: 'mail', contactId: f.contact.id }),
    },
    { status: 404, when: 'the contact is unknown', send: async (f) => rest(f.key).post(`/sequences/${await messageSequence(f)}/preview`).send({ stepId: 'mail', contactId: unknownId() }) },
    { status: 404, when: 'the sequence is unknown', send: (f) => rest(f.key).post(`/sequences/${unknownId()}/preview`).send({ stepId: 'mail', contactId: f.contact.id }) },
  ],
  'GET /events': [
    { status: 200, when: 'the account has events', send: (f) => rest(f.key).get('/events?limit=5') },
    { status: 400, when: 'the cursor is not one the feed made', send: (f) => rest(f.key).get('/events?after=nope') },
    { status: 400, when: 'the type is unknown', send: (f) => rest(f.key).get('/events?type=contact.exploded') },
  ],
  'POST /webhooks': [
    { status: 201, when: 'the URL is https', send: (f) => rest(f.key).post('/webhooks').send({ url: 'https://hooks.example.com/a' }) },
    { status: 400, when: 'the URL is a private address', send: (f) => rest(f.key).post('/webhooks').send({ url: 'https://10.0.0.1/a' }) },
  ],
  'GET /channels/pauses': [
    { status: 200, when: 'nothing is paused', send: (f) => rest(f.key).get('/channels/pauses') },
    { status: 400, when: 'the channel is unknown', send: (f) => rest(f.key).get('/channels/pauses?channel=sms') },
  ],
  'GET /channels/email': [{ status: 200, when: 'the account set nothing', send: (f) => rest(f.key).get('/channels/email') }],
  'PUT /channels/email': [
    { status: 200, when: 'the server holds a secrets key', send: (f) => rest(f.key, withChannels()).put('/channels/email').send({ from: 'news@shop.example', smtpUrl: 'smtp://u:p@smtp.shop.example:587' }) },
    { status: 400, when: 'the SMTP URL is not smtp:// or smtps://', send: (f) => rest(f.key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl: 'https://x' }) },
    { status: 409, when: 'the server has no secrets key', send: (f) => rest(f.key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl: 'smtp://u:p@smtp.shop.example' }) },
    {
      status: 409,
      when: "the relay is not on loopback and the server's PUBLIC_BASE_URL is not https",
      send: (f) => rest(f.key, withHttpBase()).put('/channels/email').send({ from: 'news@shop.example', smtpUrl: 'smtp://u:p@smtp.shop.example' }),
    },
  ],
  'GET /channels/email/domains': [{ status: 200, when: 'the account has domains or none', send: (f) => rest(f.key, withChannels()).get('/channels/email/domains') }],
  'POST /channels/email/domains': [
    { status: 201, when: 'the domain is new to the account', send: (f) => rest(f.key, withChannels()).post('/channels/email/domains').send({ domain: newDomain() }) },
    { status: 200, when: 'the account added the domain before', send: async (f) => rest(f.key, withChannels()).post('/channels/email/domains').send({ domain: await addedDomain(f) }) },
    { status: 400, when: 'the domain is not a domain name', send: (f) => rest(f.key, withChannels()).post('/channels/email/domains').send({ domain: 'not a domain' }) },
  ],
  'POST /channels/email/domains/{domain}/verify': [
    { status: 200, when: 'the account added the domain', send: async (f) => rest(f.key, withChannels()).post(`/channels/email/domains/${await addedDomain(f)}/verify`).send({}) },
    { status: 404, when: 'the account has no such domain', send: (f) => rest(f.key, withChannels()).post(`/channels/email/domains/${newDomain()}/verify`).send({}) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key, withChannels()).post(`/channels/email/domains/${newDomain()}/verify`).type('text/plain').send('x') },
  ],
  'DELETE /channels/email/domains/{domain}': [
    { status: 204, when: 'the account added the domain', send: async (f) => rest(f.key, withChannels()).delete(`/channels/email/domains/${await addedDomain(f)}`) },
    { status: 404, when: 'the account has no such domain', send: (f) => rest(f.key, withChannels()).delete(`/channels/email/domains/${newDomain()}`) },
    {
      status: 409,
      when: "the domain is the account's bounceDomain",
      send: async (f) => {
        const domain = await addedDomain(f);
        const put = await rest(f.key, withChannels()).put('/channels/email').send({ from: `news@${domain}`, bounceDomain: domain });
        expect(put.status, 'setting the bounce domain').to.equal(200);
        return rest(f.key, withChannels()).delete(`/channels/email/domains/${domain}`);
      },
    },
  ],
  'GET /channels/whatsapp': [{ status: 200, when: 'the account set nothing', send: (f) => rest(f.key).get('/channels/whatsapp') }],
  'PUT /channels/whatsapp': [
    { status: 200, when: 'the server holds a secrets key', send: (f) => rest(f.key, withChannels()).put('/channels/whatsapp').send({ phoneNumberId: '1065', accessToken: 'EAAGm0PX4ZCpsBA0123' }) },
    { status: 400, when: 'the first PUT has no token', send: (f) => rest(f.key).put('/channels/whatsapp').send({ phoneNumberId: '1065' }) },
    { status: 409, when: 'the server has no secrets key', send: (f) => rest(f.key).put('/channels/whatsapp').send({ phoneNumberId: '1065', accessToken: 'EAAGm0PX4ZCpsBA0123' }) },
  ],
  'POST /suppressions': [
    { status: 201, when: 'the addresses are valid', send: (f) => rest(f.key).post('/suppressions').send({ suppressions: [{ channel: 'email', address: fresh() }, { channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out' }] }) },
    { status: 400, when: 'an address is not one of its channel', send: (f) => rest(f.key).post('/suppressions').send({ suppressions: [{ channel: 'whatsapp', address: '015112855001' }] }) },
  ],
  'GET /suppressions': [
    { status: 200, when: 'the account has suppressions', send: async (f) => (await suppressed(f), rest(f.key).get('/suppressions?channel=email&limit=1')) },
    { status: 400, when: 'the reason is unknown', send: (f) => rest(f.key).get('/suppressions?reason=bored') },
  ],
  'GET /suppressions/{channel}/{address}': [
    { status: 200, when: 'the address is suppressed', send: async (f) => rest(f.key).get(`/suppressions/email/${encodeURIComponent(await suppressed(f))}`) },
    { status: 400, when: 'the address is not an email address', send: (f) => rest(f.key).get('/suppressions/email/nope') },
    { status: 404, when: 'the address is not suppressed', send: (f) => rest(f.key).get(`/suppressions/email/${encodeURIComponent(fresh())}`) },
  ],
  'DELETE /suppressions/{channel}/{address}': [
    { status: 204, when: 'the address is suppressed', send: async (f) => rest(f.key).delete(`/suppressions/email/${encodeURIComponent(await suppressed(f))}`) },
    { status: 400, when: 'the address is not an email address', send: (f) => rest(f.key).delete('/suppressions/email/nope') },
    { status: 404, when: 'the address is not suppressed', send: (f) => rest(f.key).delete(`/suppressions/email/${encodeURIComponent(fresh())}`) },
  ],
  'GET /webhooks': [{ status: 200, when: 'the account has an endpoint', send: async (f) => (await webhookOf(f), rest(f.key).get('/webhooks')) }],
  'GET /webhooks/{id}': [
    { status: 200, when: 'the endpoint exists', send: async (f) => rest(f.key).get(`/webhooks/${await webhookOf(f)}`) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).get(`/webhooks/${unknownId()}`) },
  ],
  'PATCH /webhooks/{id}': [
    { status: 200, when: 'it is disabled', send: async (f) => rest(f.key).patch(`/webhooks/${await webhookOf(f)}`).send({ enabled: false }) },
    { status: 400, when: 'the event type is unknown', send: async (f) => rest(f.key).patch(`/webhooks/${await webhookOf(f)}`).send({ events: ['nope'] }) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).patch(`/webhooks/${unknownId()}`).send({ enabled: false }) },
  ],
  'DELETE /webhooks/{id}': [
    { status: 204, when: 'the endpoint exists', send: async (f) => rest(f.key).delete(`/webhooks/${await webhookOf(f)}`) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).delete(`/webhooks/${unknownId()}`) },
    {
      status: 409,
      when: 'a step of an active sequence sends to it',
      send: async (f) => {
        const id = await webhookOf(f);
        const steps = [{ id: 'notify', type: 'webhook', endpointId: id }];
        expect((await rest(f.key).post('/sequences').send({ name: 'Uses it', status: 'active', steps })).status).to.equal(201);
        return rest(f.key).delete(`/webhooks/${id}`);
      },
    },
  ],
  'POST /webhooks/{id}/rotate-secret': [
    { status: 200, when: 'the endpoint exists', send: async (f) => rest(f.key).post(`/webhooks/${await webhookOf(f)}/rotate-secret`).send({}) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).post(`/webhooks/${unknownId()}/rotate-secret`).send({}) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key).post(`/webhooks/${unknownId()}/rotate-secret`).type('text/plain').send('x') },
  ],
  'GET /webhooks/{id}/deliveries': [
    { status: 200, when: 'the endpoint exists', send: async (f) => rest(f.key).get(`/webhooks/${await webhookOf(f)}/deliveries?limit=5`) },
    { status: 400, when: 'the cursor is not one', send: async (f) => rest(f.key).get(`/webhooks/${await webhookOf(f)}/deliveries?cursor=x`) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).get(`/webhooks/${unknownId()}/deliveries`) },
  ],
  'POST /webhooks/{id}/test': [
    { status: 202, when: 'the endpoint exists', send: async (f) => rest(f.key).post(`/webhooks/${await webhookOf(f)}/test`).send({}) },
    { status: 404, when: 'the endpoint is unknown', send: (f) => rest(f.key).post(`/webhooks/${unknownId()}/test`).send({}) },
    { status: 415, when: 'the body is not JSON', send: (f) => rest(f.key).post(`/webhooks/${unknownId()}/test`).type('text/plain').send('x') },
  ],
};

async function webhookOf(f: Fixture): Promise<string> {
  const res = await rest(f.key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
  expect(res.status, 'setting up a webhook').to.equal(201);
  return (res.body as { webhook: { id: string } }).webhook.id;
}

// The same for every operation: they are answered before the procedure is chosen.
function transportCases(operation: string, hasBody: boolean): Case[] {
  const [method, template] = operation.split(' ') as [string, string];
  const m = method.toLowerCase() as Method;
  const url = template.replace(/\{email\}/, 'someone%40example.com').replace(/\{\w+\}/g, () => randomUUID());
  const cases: Case[] = [
    { status: 401, when: 'the key is missing', send: () => rest(undefined).call(m, url) },
    { status: 401, when: 'the key is unknown', send: () => rest(`svc_${'a'.repeat(40)}`).call(m, url) },
    {
      status: 429,
      when: 'the key has spent its budget',
      send: async (f) => {
        const app = lowLimitApp();
        await rest(f.key, app).get('/contacts/by-email/someone%40example.com');
        const test = rest(f.key, app).call(m, url);
        return hasBody ? test.send({}) : test;
      },
    },
  ];
  // Every method but GET has its JSON body parsed, whether the operation takes one or not.
  if (m !== 'get') {
    cases.push({
      status: 413,
      when: 'the body is over 1 MiB',
      send: (f) => rest(f.key).call(m, url).set('content-type', 'application/json').send(OVER_1_MIB),
    });
    cases.push({
      status: 400,
      when: 'the body is malformed JSON',
      send: (f) => rest(f.key).call(m, url).set('content-type', 'application/json').send('{"email":'),
    });
  }
  // Idempotency-Key: a key used for another request, and one whose first request still runs.
  if (m === 'post') {
    cases.push({
      status: 422,
      when: 'the Idempotency-Key was used for another request',
      send: async (f) => {
        await rest(f.key).post(url).set('Idempotency-Key', 'used').send({ a: 1 });
        return rest(f.key).post(url).set('Idempotency-Key', 'used').send({ a: 2 });
      },
    });
    cases.push({
      status: 409,
      when: 'the Idempotency-Key\'s first request is still running',
      send: async (f) => {
        await execute(testDb(), 'INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, locked_until, expires_at) VALUES (?, ?, ?, ?, ?)', [
          f.accountId, 'running', requestHash('POST', `/api/v1${url}`, {}), new Date(Date.now() + 60_000), new Date(Date.now() + 86_400_000),
        ]);
        return rest(f.key).post(url).set('Idempotency-Key', 'running').send({});
      },
    });
  }
  // A DELETE reads a JSON body when there is one; another type is simply no body (then 400).
  if (hasBody && m !== 'delete') {
    cases.push({ status: 415, when: 'the body is form-encoded', send: (f) => rest(f.key).call(m, url).type('form').send('email=a%40b.co') });
  }
  return cases;
}

function lowLimitApp(): Express {
  return createApp({ db: testDb(), config: { rateLimitPerMinute: 1, authFailureLimitPerMinute: 100 }, logger: silentLogger });
}

async function buildFixture(): Promise<Fixture> {
  const { key, accountId } = await buildTenant();
  const contact = await buildContact(accountId, { tags: ['vip', 'newsletter'], customFields: { plan: 'pro' } });
  const other = await buildContact(accountId);
  const active = await buildSequence(accountId, 'active');
  const paused = await buildSequence(accountId, 'paused');
  return { key, accountId, contact, other, active, paused };
}

// The document is made once in-process (as JSON, as a client reads it) so the case table can be
// built before the server runs; the first tests below prove the served one is the same. The files
// the build writes from it are checked by openapi-generated.test.ts.
const published = JSON.parse(JSON.stringify(buildOpenApiDocument(appRouter))) as OpenApiDocument;
const operations = Object.entries(published.paths).flatMap(([template, item]) =>
  Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${template}`, template, method, operation: operation as Operation })),
);

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
ajv.addSchema(published as object, 'openapi.json');
const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

function expectConformant(operationKey: string, res: request.Response) {
  const op = operations.find((o) => o.key === operationKey);
  expect(op, `${operationKey} is in the document`).to.not.equal(undefined);
  const status = String(res.status);
  const inline = op!.operation.responses[status];
  expect(inline, `${operationKey} answered ${status}, which the document does not declare (body ${res.text})`).to.not.equal(undefined);
  // A shared answer is a reference into components.responses.
  const ref = (inline as { $ref?: string }).$ref;
  const declared = ref ? published.components.responses![ref.split('/').pop()!]! : inline;

  for (const header of Object.keys(declared.headers ?? {})) {
    // Only on an answer replayed for an Idempotency-Key.
    if (header === 'Idempotent-Replayed' && res.headers['idempotent-replayed'] === undefined) continue;
    expect(res.headers[header.toLowerCase()], `${operationKey} ${status}: declared header ${header}`).to.be.a('string');
  }
  if (!declared.content) {
    expect(res.text ?? '', `${operationKey} ${status} declares no body`).to.equal('');
    return;
  }
  // A CSV answer (the import's errors) is text: its type is what can be checked.
  if ((declared.content as Record<string, unknown>)['text/csv']) {
    expect(res.headers['content-type']).to.match(/^text\/csv/);
    return;
  }
  expect(res.headers['content-type']).to.match(/^application\/json/);
  const at = ref ? ['components', 'responses', ref.split('/').pop()!] : ['paths', op!.template, op!.method, 'responses', status];
  const pointer = [...at, 'content', 'application/json', 'schema'].map(escapePointer).join('/');
  const validate = ajv.getSchema(`openapi.json#/${pointer}`);
  expect(validate, `schema at ${pointer}`).to.be.a('function');
  const valid = validate!(res.body);
  expect(valid, `${operationKey} ${status} body ${JSON.stringify(res.body)}: ${ajv.errorsText(validate!.errors)}`).to.equal(true);
}

describe('OpenAPI document', () => {
  describe('GET /api/v1/openapi.json', () => {
    it('serves an OpenAPI 3.x document without a key', async () => {
      const res = await request(testApp()).get('/api/v1/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      expect(res.body.openapi).to.match(/^3\.\d+\.\d+$/);
      expect(res.body.info.title).to.be.a('string').and.not.equal('');
      expect(res.body.paths).to.be.an('object');
    });

    it('is exactly the document the procedures make, which the cases below are checked against', async () => {
      const res = await request(testApp()).get('/api/v1/openapi.json');
      expect(res.body).to.deep.equal(published);
    });

    it('declares the x-api-key header as the ApiKey scheme, required by every operation', () => {
      expect(published.components.securitySchemes).to.deep.equal({ ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } });
      for (const { key, operation } of operations) {
        expect(operation.security, key).to.deep.equal([{ ApiKey: [] }]);
      }
    });

    it('lists exactly the public REST operations, and no internal procedure such as runs.transition', () => {
      expect(operations.map((o) => o.key)).to.have.members(Object.keys(SUCCESS_STATUSES));
      expect(Object.keys(published.paths).filter((p) => /transition|^\/runs/i.test(p))).to.deep.equal([]);
      expect(operations.map((o) => o.operation.operationId ?? '').filter((id) => /^runs|transition/i.test(id))).to.deep.equal([]);
    });

    it('declares the success statuses the service really answers', () => {
      for (const { key, operation } of operations) {
        const successes = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
        expect(successes, key).to.deep.equal(SUCCESS_STATUSES[key]);
      }
    });

    it('has a request case for every declared status of every operation', () => {
      const exercised = new Set(
        operations.flatMap(({ key, operation }) => [
          ...[...CASES[key], ...transportCases(key, Boolean(operation.requestBody))].map((c) => `${key} ${c.status}`),
          ...(key === SERVER_ERRORS_CHECKED_ON ? [`${key} 500`, `${key} 503`] : []),
        ]),
      );
      const missing = operations.flatMap(({ key, operation }) =>
        Object.keys(operation.responses)
          .map((status) => `${key} ${status}`)
          .filter((id) => !exercised.has(id) && !UNREACHABLE[id] && !/ 50[03]$/.test(id)),
      );
      expect(missing).to.deep.equal([]);
    });
  });

  describe('responses match the declared schemas', () => {
    for (const { key, operation } of operations) {
      describe(key, () => {
        for (const c of [...(CASES[key] ?? []), ...transportCases(key, Boolean(operation.requestBody))]) {
          it(`answers ${c.status} as the document declares when ${c.when}`, async () => {
            const res = await c.send(await buildFixture());
            expect(res.status, `${key} when ${c.when}: ${res.text}`).to.equal(c.status);
            expectConformant(key, res);
          });
        }
      });
    }

    it(`answers ${SERVER_ERRORS_CHECKED_ON} 500 as the document declares when the database fails`, async () => {
      const f = await buildFixture();
      const res = await withFailingContactQueries(() => rest(f.key).get(`/contacts/${f.contact.id}`).then((r) => r));
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ error: 'Internal server error' });
      expectConformant(SERVER_ERRORS_CHECKED_ON, res);
    });

    it(`answers ${SERVER_ERRORS_CHECKED_ON} 503 as the document declares when the database is unavailable`, async () => {
      const f = await buildFixture();
      // A lost connection on the contact's own statements; the key lookup still works.
      const refused = () => new ConnectionRefusedError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));
      const res = await withFailingStatements({ scope: 'contacts', failure: refused }, () =>
        rest(f.key).get(`/contacts/${f.contact.id}`).then((r) => r),
      );
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.include({ error: 'Database unavailable; retry shortly' });
      expect(res.headers['retry-after']).to.equal('5');
      expectConformant(SERVER_ERRORS_CHECKED_ON, res);
    });

    it(`answers ${SERVER_ERRORS_CHECKED_ON} 503 as the document declares when the rate-limit store fails`, async () => {
      const f = await buildFixture();
      const app = createApp({
        db: testDb(),
        config: { rateLimitPerMinute: 100 },
        logger: silentLogger,
        rateLimitLog: new RedisSlidingLog({ sendCommand: () => Promise.reject(new Error('ECONNREFUSED')) }),
      });
      const res = await rest(f.key, app).get(`/contacts/${f.contact.id}`);
      expect(res.status).to.equal(503);
      expectConformant(SERVER_ERRORS_CHECKED_ON, res);
    });
  });
});
