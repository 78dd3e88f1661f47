import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { ConflictError, NotFoundError } from '../../src/errors/app-errors';
import { appRouter } from '../../src/routers/app-router';
import { api, caller, testApp } from '../support/app';
import { buildSequence, buildTenant } from '../support/factories';
import { storedRuns } from '../support/sequence-rows';
import { trpcRejection } from '../support/trpc';

// The internal run lifecycle (docs/decisions.md "Runs"), through createCaller as the sequence runner
// would call it over tRPC, with a runner key (test/procedures/key-kinds.test.ts has the others). The table of moves is written out here, not imported, so that a
// change to the code's table shows up as a failing test.

type Status = 'pending' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

const STATUSES: Status[] = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];
const ACTIVE: Status[] = ['pending', 'running', 'paused'];
const ALLOWED: Record<Status, Status[]> = {
  pending: ['running', 'cancelled', 'failed'],
  running: ['paused', 'completed', 'failed', 'cancelled'],
  paused: ['running', 'cancelled', 'failed'],
  completed: [],
  failed: [],
  cancelled: [],
};
// How a new (pending) run reaches each status through allowed moves.
const PATH_TO: Record<Status, Status[]> = {
  pending: [],
  running: ['running'],
  paused: ['running', 'paused'],
  completed: ['running', 'completed'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

async function runIn(status: Status) {
  const tenant = await buildTenant({ kind: 'runner' });
  const sequence = await buildSequence(tenant.accountId, 'active');
  const outcome = await caller(tenant.key).sequences.trigger({ id: sequence.id, contact: { email: 'runner@example.com' } });
  if (!outcome.enrolled) throw new Error(`setup: not enrolled (${outcome.reason})`);
  for (const step of PATH_TO[status]) await caller(tenant.key).runs.transition({ runId: outcome.runId, status: step });
  const [run] = await storedRuns({ contactId: outcome.contactId });
  expect(run.status, 'setup reached the status').to.equal(status);
  return { ...tenant, sequenceId: sequence.id, contactId: outcome.contactId, runId: outcome.runId, run };
}

function isoBetween(value: string | null, before: number, after: number) {
  expect(value).to.be.a('string');
  const at = Date.parse(value as string);
  expect(at, `${value} within the call`).to.be.within(before, after);
}

describe('run transitions (runs.transition, internal tRPC)', () => {
  for (const from of STATUSES) {
    for (const to of ALLOWED[from]) {
      const finishes = !ACTIVE.includes(to);
      it(`moves a ${from} run to ${to}${finishes ? ' and sets completedAt' : ', completedAt staying null'}`, async () => {
        const { key, runId, run, sequenceId, contactId } = await runIn(from);
        const before = Date.now();
        const result = await caller(key).runs.transition({ runId, status: to });
        const after = Date.now();

        expect(result.run).to.include({ id: runId, status: to, startedAt: run.startedAt, createdAt: run.createdAt });
        if (finishes) isoBetween(result.run.completedAt, before, after);
        else expect(result.run.completedAt).to.equal(null);

        const [stored] = await storedRuns({ contactId });
        expect(stored).to.include({ id: runId, status: to, completedAt: result.run.completedAt, createdAt: run.createdAt });
        const status = await caller(key).sequences.enrollmentStatus({ id: sequenceId, contactId });
        expect(status).to.deep.equal({ enrolled: !finishes, run: result.run });
      });
    }
  }

  for (const from of STATUSES) {
    for (const to of STATUSES.filter((status) => !ALLOWED[from].includes(status))) {
      it(`refuses to move a ${from} run to ${to} with CONFLICT (409) and leaves it as it was`, async () => {
        const { key, runId, run, contactId } = await runIn(from);
        const error = await trpcRejection(caller(key).runs.transition({ runId, status: to }));

        expect(error.code).to.equal('CONFLICT');
        expect(error.cause).to.be.instanceOf(ConflictError);
        expect(getHTTPStatusCodeFromError(error)).to.equal(409);
        expect(error.message).to.include(from).and.to.include(to);
        expect(await storedRuns({ contactId })).to.deep.equal([run]);
      });
    }
  }

  it('answers NOT_FOUND (404) for an unknown, a malformed or another account\'s run id', async () => {
    const { runId, contactId, run } = await runIn('pending');
    const other = await buildTenant({ kind: 'runner' });
    for (const id of [randomUUID(), 'not-a-uuid', runId]) {
      const error = await trpcRejection(caller(other.key).runs.transition({ runId: id, status: 'running' }));
      expect(error.code, id).to.equal('NOT_FOUND');
      expect(error.cause).to.be.instanceOf(NotFoundError);
      expect(getHTTPStatusCodeFromError(error)).to.equal(404);
      expect(error.message).to.equal('Run not found');
    }
    expect(await storedRuns({ contactId })).to.deep.equal([run]);
  });

  it('rejects a status that is not a run status with BAD_REQUEST', async () => {
    const { key, runId, contactId, run } = await runIn('pending');
    const error = await trpcRejection(
      caller(key).runs.transition({ runId, status: 'archived' as unknown as Status }),
    );
    expect(error.code).to.equal('BAD_REQUEST');
    expect(await storedRuns({ contactId })).to.deep.equal([run]);
  });

  it('needs an API key like every procedure', async () => {
    const { runId, contactId, run } = await runIn('pending');
    const error = await trpcRejection(caller().runs.transition({ runId, status: 'running' }));
    expect(error.code).to.equal('UNAUTHORIZED');
    expect(await storedRuns({ contactId })).to.deep.equal([run]);
  });

  describe('transport', () => {
    it('is served over tRPC HTTP at /trpc/runs.transition', async () => {
      const { key, runId, contactId } = await runIn('pending');
      const res = await request(testApp())
        .post('/trpc/runs.transition')
        .set('x-api-key', key)
        .send({ runId, status: 'running' });
      expect(res.status).to.equal(200);
      expect(res.body.result.data.run).to.include({ id: runId, status: 'running', completedAt: null });
      expect((await storedRuns({ contactId }))[0].status).to.equal('running');
    });

    it('has no REST path under /api/v1: every plausible one is 404 and the run stays as it was', async () => {
      const { key, runId, contactId, run } = await runIn('pending');
      const body = { runId, status: 'running' };
      const attempts: Record<string, request.Test> = {
        'POST /runs/transition': api(key).post('/runs/transition').send(body),
        'POST /runs.transition': api(key).post('/runs.transition').send(body),
        'POST /runs/:id/transition': api(key).post(`/runs/${runId}/transition`).send(body),
        'PATCH /runs/:id': api(key).patch(`/runs/${runId}`).send(body),
        'PUT /runs/:id': api(key).put(`/runs/${runId}`).send(body),
        'POST /runs/:id': api(key).post(`/runs/${runId}`).send(body),
      };
      for (const [attempt, pending] of Object.entries(attempts)) {
        const res = await pending;
        expect(res.status, attempt).to.equal(404);
        expect(res.body, attempt).to.deep.include({ error: 'Not found' });
      }
      expect(await storedRuns({ contactId })).to.deep.equal([run]);
    });

    it('is absent from the OpenAPI document of the REST surface', () => {
      const document = generateOpenApiDocument(appRouter, { title: 'test', version: '1', baseUrl: 'http://x/api/v1' });
      const paths = Object.keys(document.paths ?? {});
      // A sanity check that the document is the REST surface at all.
      expect(paths).to.include('/sequences/{id}/trigger');
      expect(paths.filter((path) => /transition|^\/runs/i.test(path))).to.deep.equal([]);
      const operationIds = Object.values(document.paths ?? {}).flatMap((item) =>
        Object.values(item ?? {}).map((operation) => (operation as { operationId?: string })?.operationId ?? ''),
      );
      expect(operationIds.filter((id) => /^runs|transition/i.test(id))).to.deep.equal([]);
    });
  });
});
