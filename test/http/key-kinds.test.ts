import { LogThrottle } from '../../src/logging/log-throttle';
import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { select } from '../../src/db/sql/statements';
import { requireApiKey, resolveApiKey } from '../../src/http/api-key-auth';
import { restApi } from '../../src/http/rest-api';
import { appRouter, type AppRouter } from '../../src/routers/app-router';
import { router, runnerProcedure } from '../../src/trpc/init';
import { api, silentLogger, testApp } from '../support/app';
import { testDb } from '../support/db';
import { buildApiKey, buildSequence, buildTenant } from '../support/factories';

// Key kinds over HTTP (issue 7): an integration key calling the internal runs.transition on
// /trpc gets 403 in tRPC's error envelope (what tRPC clients read), and nothing changes; a
// runner key moves the run, and may call everything else too.

const FORBIDDEN = 'This API key may not call this procedure';

async function runRow(runId: string) {
  const [row] = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM sequence_runs WHERE id = ?', [runId]);
  return row;
}

async function accountWithRun() {
  const tenant = await buildTenant();
  const runner = await buildApiKey(tenant.accountId, { name: 'runner', kind: 'runner' });
  const sequence = await buildSequence(tenant.accountId, 'active');
  const res = await api(tenant.key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: 'ada@example.com' } });
  expect(res.body.enrolled, 'setup enrolled').to.equal(true);
  return { ...tenant, runnerKey: runner.key, runId: res.body.runId as string };
}

function transition(key: string | undefined, body: unknown) {
  const test = request(testApp()).post('/trpc/runs.transition');
  return (key ? test.set('x-api-key', key) : test).send(body as object);
}

// A call every procedure refuses as input: past authentication and the kind check, it is a 400.
function emptyCall(key: string, path: string, type: string) {
  const test =
    type === 'query'
      ? request(testApp()).get(`/trpc/${path}`).query({ input: '{}' })
      : request(testApp()).post(`/trpc/${path}`).send({});
  return test.set('x-api-key', key);
}

describe('API key kinds over HTTP', () => {
  describe('POST /trpc/runs.transition', () => {
    it('answers an integration key 403 in tRPC\'s envelope and changes nothing', async () => {
      const { key, runId } = await accountWithRun();
      const before = await runRow(runId);

      const res = await transition(key, { runId, status: 'running' });

      expect(res.status).to.equal(403);
      expect(res.body).to.deep.equal({
        error: {
          code: -32003,
          message: FORBIDDEN,
          data: {
            code: 'FORBIDDEN',
            appCode: 'forbidden',
            httpStatus: 403,
            path: 'runs.transition',
            requestId: res.headers['x-request-id'],
            details: null,
          },
        },
      });
      expect(await runRow(runId)).to.deep.equal(before);
    });

    it('answers an integration key 403 whatever the input', async () => {
      const { key, runId } = await accountWithRun();
      const before = await runRow(runId);
      for (const body of [{ runId, status: 'archived' }, { runId: 'not-a-uuid' }, {}]) {
        const res = await transition(key, body);
        expect(res.status, JSON.stringify(body)).to.equal(403);
        expect(res.body.error.message).to.equal(FORBIDDEN);
      }
      expect(await runRow(runId)).to.deep.equal(before);
    });

    it('answers 401 before 403: a missing or bad key is not told about kinds', async () => {
      const { runId } = await accountWithRun();
      const missing = await transition(undefined, { runId, status: 'running' });
      expect(missing.status).to.equal(401);
      expect(missing.body.error.message).to.equal('Missing x-api-key header');
      const bad = await transition(`svc_${'f'.repeat(40)}`, { runId, status: 'running' });
      expect(bad.status).to.equal(401);
      expect(bad.body.error.message).to.equal('Invalid API key');
    });

    it('lets a runner key move the run', async () => {
      const { runnerKey, runId } = await accountWithRun();
      const res = await transition(runnerKey, { runId, status: 'running' });
      expect(res.status).to.equal(200);
      expect(res.body.result.data.run).to.include({ id: runId, status: 'running', completedAt: null });
      expect((await runRow(runId)).status).to.equal('running');
    });
  });

  it('keeps runs.transition the only procedure an integration key may not call, and a runner key may call all', async () => {
    const integration = await buildTenant();
    const runner = await buildTenant({ kind: 'runner' });
    const refused: string[] = [];
    // Lists take no required input (an empty call is a first page), nor do the channel settings' reads.
    const answered = (path: string) =>
      ['contacts.list', 'contacts.imports.list', 'sequences.list', 'events.list', 'webhooks.list', 'suppressions.list', 'channels.getEmail', 'channels.getWhatsApp', 'channels.listEmailDomains', 'channels.pauses'].includes(path) ? 200 : 400;
    for (const [path, procedure] of Object.entries(appRouter._def.procedures)) {
      const { type } = (procedure as unknown as { _def: { type: string } })._def;
      if (path.startsWith('dashboard.')) {
        // The dashboard's procedures take a session, never a key of any kind (test/dashboard).
        expect((await emptyCall(runner.key, path, type)).status, `${path} with a runner key`).to.equal(401);
        continue;
      }
      const asRunner = await emptyCall(runner.key, path, type);
      expect(asRunner.status, `${path} with a runner key`).to.equal(answered(path));
      const asIntegration = await emptyCall(integration.key, path, type);
      if (asIntegration.status === 403) refused.push(path);
      else expect(asIntegration.status, `${path} with an integration key`).to.equal(answered(path));
    }
    expect(refused).to.deep.equal(['runs.transition']);
  });

  it('serves a runner key the REST API like any key', async () => {
    const { key, accountId } = await buildTenant({ kind: 'runner' });
    const sequence = await buildSequence(accountId, 'active');
    const created = await api(key).post('/contacts').send({ email: 'grace@example.com' });
    expect(created.status).to.equal(201);
    const triggered = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: 'grace@example.com' } });
    expect(triggered.status).to.equal(202);
    expect(triggered.body).to.include({ enrolled: true, contactId: created.body.contact.id });
    const status = await api(key).get(`/sequences/${sequence.id}/enrollments/${created.body.contact.id}`);
    expect(status.status).to.equal(200);
    expect(status.body.run.id).to.equal(triggered.body.runId);
  });

  // No REST operation is runner-only today. Should one be, its 403 must read like every REST
  // error: { error } and nothing else. A one-procedure router served by the real REST adapter.
  it('answers 403 {"error"} on a REST path, should a runner-only procedure ever have one', async () => {
    const probeRouter = router({
      probe: runnerProcedure
        .meta({ openapi: { method: 'POST', path: '/probe' } })
        .input(z.object({ n: z.number() }))
        .output(z.object({ n: z.number() }))
        .mutation(({ input }) => ({ n: input.n })),
    });
    const db = testDb();
    const app = express()
      .use(express.json())
      .use(
        '/api/v1',
        resolveApiKey(db),
        requireApiKey,
        restApi({ router: probeRouter as unknown as AppRouter, db, logThrottle: new LogThrottle() }),
      );
    const { key, accountId } = await buildTenant();
    const runner = await buildApiKey(accountId, { kind: 'runner' });

    const refused = await request(app).post('/api/v1/probe').set('x-api-key', key).send({ n: 'not a number' });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.include({ error: FORBIDDEN });

    const served = await request(app).post('/api/v1/probe').set('x-api-key', runner.key).send({ n: 7 });
    expect(served.status).to.equal(200);
    expect(served.body).to.deep.equal({ n: 7 });
  });
});
