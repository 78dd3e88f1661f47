import type { Server } from 'node:http';
import { TRPCClientError } from '@trpc/client';
import { expect } from 'chai';
import { createApp } from '../../src/app';
import { createRestClient } from '../../src/client/rest-client';
import { createServiceClient } from '../../src/client/trpc-client';
import type { AppRouter } from '../../src/routers/app-router';
import { silentLogger, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { closeServer, listenOnLoopback } from '../support/listen';

// The two typed clients shipped in src/client, end to end over HTTP against a real server:
// the tRPC one (internal TypeScript apps, every procedure) and the REST one (openapi-fetch on
// the types the build generates from the served document).

async function expectTrpcError(call: Promise<unknown>, code: string, message?: string) {
  let caught: unknown;
  try {
    await call;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected a ${code} TRPCClientError`).to.be.instanceOf(TRPCClientError);
  const error = caught as TRPCClientError<AppRouter>;
  expect(error.data?.code).to.equal(code);
  if (message) expect(error.message).to.equal(message);
  return error;
}

describe('typed clients over HTTP', () => {
  let server: Server;
  let baseUrl: string;

  before(async () => {
    ({ server, base: baseUrl } = await listenOnLoopback(testApp()));
  });
  after(async () => {
    await closeServer(server);
  });

  describe('tRPC client (createServiceClient)', () => {
    it('creates a contact, reads it back, triggers, reads the enrollment and moves the run', async () => {
      const { key, accountId } = await buildTenant({ kind: 'runner' });
      const sequence = await buildSequence(accountId, 'active');
      const foreign = await buildSequence((await buildTenant()).accountId, 'active');
      const client = createServiceClient({ baseUrl, apiKey: key });

      const { contact } = await client.contacts.create.mutate({ email: 'Ada@Example.com', firstName: 'Ada', tags: ['vip', 'vip'] });
      expect(contact).to.include({ email: 'Ada@Example.com', firstName: 'Ada', phone: null });
      expect(contact.tags).to.deep.equal(['vip']);

      const read = await client.contacts.get.query({ id: contact.id });
      expect(read.contact).to.deep.equal(contact);

      const outcome = await client.sequences.trigger.mutate({ id: sequence.id, contact: { email: 'ada@example.com', lastName: 'Lovelace' } });
      expect(outcome.enrolled).to.equal(true);
      if (!outcome.enrolled) throw new Error('unreachable');
      expect(outcome.contactId).to.equal(contact.id);

      const status = await client.sequences.enrollmentStatus.query({ id: sequence.id, contactId: contact.id });
      expect(status.enrolled).to.equal(true);
      expect(status.run).to.include({ id: outcome.runId, status: 'pending', completedAt: null });

      const moved = await client.runs.transition.mutate({ runId: outcome.runId, status: 'running' });
      expect(moved.run).to.include({ id: outcome.runId, status: 'running' });
      const done = await client.runs.transition.mutate({ runId: outcome.runId, status: 'completed' });
      expect(done.run.completedAt).to.be.a('string');
      expect((await client.sequences.enrollmentStatus.query({ id: sequence.id, contactId: contact.id })).enrolled).to.equal(false);

      await expectTrpcError(client.sequences.trigger.mutate({ id: foreign.id, contact: { email: 'ada@example.com' } }), 'NOT_FOUND', 'Sequence not found');
    });

    it('surfaces an unknown contact as a NOT_FOUND TRPCClientError', async () => {
      const { key } = await buildTenant();
      const client = createServiceClient({ baseUrl, apiKey: key });
      const error = await expectTrpcError(
        client.contacts.get.query({ id: '00000000-0000-4000-8000-000000000000' }),
        'NOT_FOUND',
        'Contact not found',
      );
      expect(error.data?.httpStatus).to.equal(404);
    });

    it('surfaces a bad key as an UNAUTHORIZED TRPCClientError', async () => {
      const client = createServiceClient({ baseUrl, apiKey: `svc_${'0'.repeat(40)}` });
      const error = await expectTrpcError(client.contacts.create.mutate({ email: 'ada@example.com' }), 'UNAUTHORIZED', 'Invalid API key');
      expect(error.data?.httpStatus).to.equal(401);
    });

    it('surfaces the rate limit as a TOO_MANY_REQUESTS TRPCClientError', async () => {
      const { key } = await buildTenant();
      const limited = await listenOnLoopback(createApp({ db: testDb(), config: { rateLimitPerMinute: 1 }, logger: silentLogger }));
      try {
        const client = createServiceClient({ baseUrl: limited.base, apiKey: key });
        await expectTrpcError(client.contacts.get.query({ id: 'x' }), 'NOT_FOUND');
        const error = await expectTrpcError(client.contacts.get.query({ id: 'x' }), 'TOO_MANY_REQUESTS', 'Rate limit exceeded');
        expect(error.data?.httpStatus).to.equal(429);
      } finally {
        await closeServer(limited.server);
      }
    });

    it('surfaces an illegal run move as a CONFLICT TRPCClientError', async () => {
      const { key, accountId } = await buildTenant({ kind: 'runner' });
      const sequence = await buildSequence(accountId, 'active');
      const client = createServiceClient({ baseUrl, apiKey: key });
      const outcome = await client.sequences.trigger.mutate({ id: sequence.id, contact: { email: 'ada@example.com' } });
      if (!outcome.enrolled) throw new Error('expected an enrollment');
      await expectTrpcError(client.runs.transition.mutate({ runId: outcome.runId, status: 'completed' }), 'CONFLICT');
    });
    it('surfaces runs.transition with an integration key as a FORBIDDEN TRPCClientError', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const client = createServiceClient({ baseUrl, apiKey: key });
      const outcome = await client.sequences.trigger.mutate({ id: sequence.id, contact: { email: 'ada@example.com' } });
      if (!outcome.enrolled) throw new Error('expected an enrollment');
      const error = await expectTrpcError(
        client.runs.transition.mutate({ runId: outcome.runId, status: 'running' }),
        'FORBIDDEN',
        'This API key may not call this procedure',
      );
      expect(error.data?.httpStatus).to.equal(403);
      const status = await client.sequences.enrollmentStatus.query({ id: sequence.id, contactId: outcome.contactId });
      expect(status.run).to.include({ id: outcome.runId, status: 'pending' });
    });
  });

  describe('REST client (createRestClient)', () => {
    it('runs create, upsert, trigger and enrollment status with typed calls', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const client = createRestClient({ baseUrl, apiKey: key });

      const created = await client.POST('/contacts', { body: { email: 'grace@example.com', tags: ['navy'] } });
      expect(created.response.status).to.equal(201);
      expect(created.error).to.equal(undefined);
      const contactId = created.data!.contact.id;
      expect(created.data!.contact).to.include({ email: 'grace@example.com', emailSubscriptionStatus: 'subscribed' });

      const upserted = await client.POST('/contacts/upsert', {
        body: { email: 'GRACE@example.com', firstName: 'Grace', customFields: { rank: 'admiral' } },
      });
      expect(upserted.response.status).to.equal(200);
      expect(upserted.data).to.deep.include({ created: false });
      expect(upserted.data!.contact).to.include({ id: contactId, email: 'grace@example.com', firstName: 'Grace' });
      expect(upserted.data!.contact.tags).to.deep.equal(['navy']);

      const triggered = await client.POST('/sequences/{id}/trigger', {
        params: { path: { id: sequence.id } },
        body: { contact: { email: 'grace@example.com' } },
      });
      expect(triggered.response.status).to.equal(202);
      const outcome = triggered.data!;
      expect(outcome).to.include({ enrolled: true, contactId });
      const runId = 'runId' in outcome ? outcome.runId : undefined;
      expect(runId).to.be.a('string');

      const status = await client.GET('/sequences/{id}/enrollments/{contactId}', {
        params: { path: { id: sequence.id, contactId } },
      });
      expect(status.response.status).to.equal(200);
      expect(status.data!.enrolled).to.equal(true);
      expect(status.data!.run).to.include({ id: runId, status: 'pending' });
    });

    it('returns the typed error body for 404, 409 and 401', async () => {
      const { key, accountId } = await buildTenant();
      const paused = await buildSequence(accountId, 'paused');
      const client = createRestClient({ baseUrl, apiKey: key });

      const missing = await client.GET('/contacts/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
      expect(missing.response.status).to.equal(404);
      expect(missing.data).to.equal(undefined);
      expect(missing.error).to.deep.include({ error: 'Contact not found' });

      const inactive = await client.POST('/sequences/{id}/enroll-by-email', {
        params: { path: { id: paused.id } },
        body: { email: 'grace@example.com' },
      });
      expect(inactive.response.status).to.equal(409);
      expect(inactive.error?.error).to.equal('Sequence is not active');

      const anonymous = createRestClient({ baseUrl, apiKey: `svc_${'f'.repeat(40)}` });
      const denied = await anonymous.POST('/contacts', { body: { email: 'grace@example.com' } });
      expect(denied.response.status).to.equal(401);
      expect(denied.error).to.deep.include({ error: 'Invalid API key' });
    });

    it('sends a typed validation error back with its details', async () => {
      const { key } = await buildTenant();
      const client = createRestClient({ baseUrl, apiKey: key });
      const res = await client.POST('/contacts/batch', { body: { contacts: [{ email: 'ok@example.com' }, { email: 'nope' }] } });
      expect(res.response.status).to.equal(400);
      const error = res.error as { error: string; details?: Array<{ path: string; message: string }> };
      expect(error.error).to.match(/^contacts\.1\.email: /);
      expect(error.details?.[0]?.path).to.equal('contacts.1.email');
    });

    it('deletes with 204 and no data', async () => {
      const { key } = await buildTenant();
      const client = createRestClient({ baseUrl, apiKey: key });
      const { data } = await client.POST('/contacts', { body: { email: 'gone@example.com' } });
      const deleted = await client.DELETE('/contacts/{id}', { params: { path: { id: data!.contact.id } } });
      expect(deleted.response.status).to.equal(204);
      expect(deleted.error).to.equal(undefined);
      const after = await client.GET('/contacts/{id}', { params: { path: { id: data!.contact.id } } });
      expect(after.response.status).to.equal(404);
    });
  });
});
