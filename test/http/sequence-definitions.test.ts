import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type request from 'supertest';
import { listEvents } from '../../src/services/events/list-events';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { badDefinitions, definitionRows, engineNow, storedVersions } from '../support/sequence-definitions';

// The sequence-definition API over REST (docs/api.md "Sequences", docs/sequences.md): POST and
// PATCH /sequences with steps, GET a run's timeline, pause and resume: statuses, bodies,
// headers. What each procedure stores and moves: test/procedures/sequence-definitions.test.ts.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SEQUENCE_KEYS = ['id', 'name', 'status', 'activeRuns', 'version', 'steps', 'exitWhen', 'sendingWindow', 'entry', 'goal', 'createdAt', 'updatedAt'];
const RUN_KEYS = ['id', 'status', 'startedAt', 'completedAt', 'createdAt', 'version', 'currentStepId', 'reason'];
const RUN_DETAIL_KEYS = [...RUN_KEYS, 'sequenceId', 'contactId', 'dueAt', 'waitingFor', 'retry', 'trigger', 'awaiting', 'executions'];
const WAIT_THEN_EXIT = [
  { id: 'w1', type: 'wait', duration: 'P1D' },
  { id: 'end', type: 'exit' },
];

function expectJson(res: request.Response, status: number) {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(res.headers['x-request-id']).to.be.a('string').and.not.equal('');
}

// An error body: { error, code, requestId } (and details on validation_failed), its request id in the header too.
function expectError(res: request.Response, status: number, code: string, error?: string | RegExp) {
  expectJson(res, status);
  expect(res.body).to.have.all.keys(...(code === 'validation_failed' ? ['error', 'code', 'requestId', 'details'] : ['error', 'code', 'requestId']));
  expect(res.body).to.include({ code, requestId: res.headers['x-request-id'] });
  if (typeof error === 'string') expect(res.body.error).to.equal(error);
  else if (error) expect(res.body.error).to.match(error);
}

async function create(key: string, body: Record<string, unknown>) {
  const res = await api(key).post('/sequences').send({ name: 'Welcome', ...body });
  expectJson(res, 201);
  return res.body.sequence;
}

// An active sequence with steps, and one contact enrolled in it: its run.
async function enrolled(steps: object[] = WAIT_THEN_EXIT) {
  const tenant = await buildTenant();
  const sequence = await create(tenant.key, { status: 'active', steps });
  const contact = await buildContact(tenant.accountId);
  expect((await api(tenant.key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id] })).status).to.equal(201);
  const runs = await api(tenant.key).get(`/sequences/${sequence.id}/runs`);
  return { ...tenant, sequence, contact, runId: runs.body.runs[0].id as string };
}

describe('Sequence definitions API (REST)', () => {
  describe('POST /sequences', () => {
    it('answers 201 with the sequence: draft, version 1, ids kept or generated, rules and window, no runs; GET answers the same', async () => {
      const { key } = await buildTenant();
      const body = {
        name: 'Welcome',
        steps: [{ id: 'pause', type: 'wait', until: { time: '09:30', weekdays: ['mon'] } }, { type: 'tag', add: ['welcomed'] }],
        exitWhen: [{ unsubscribed: 'whatsapp' }],
        sendingWindow: { timeZone: 'Asia/Kolkata', useContactTimeZone: true },
      };
      const res = await api(key).post('/sequences').send(body);
      expectJson(res, 201);
      expect(res.body).to.have.all.keys('sequence');
      const { sequence } = res.body;
      expect(sequence).to.have.all.keys(...SEQUENCE_KEYS);
      expect(sequence).to.include({ name: 'Welcome', status: 'draft', version: 1, activeRuns: 0 });
      expect(sequence.id).to.match(UUID);
      expect(sequence.createdAt).to.match(ISO);
      expect(sequence.steps[0]).to.deep.equal(body.steps[0]);
      expect(sequence.steps[1]).to.include({ type: 'tag' }).and.have.property('id').that.matches(/^step-[0-9a-f]{8}$/);
      expect(sequence.steps[1].add).to.deep.equal(['welcomed']);
      expect(sequence.exitWhen).to.deep.equal(body.exitWhen);
      expect(sequence.sendingWindow).to.deep.equal(body.sendingWindow);

      const got = await api(key).get(`/sequences/${sequence.id}`);
      expectJson(got, 200);
      expect(got.body).to.deep.equal({ sequence });
    });

    it('answers 201 with version null and no steps when none are given, with the status given', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { status: 'paused' });
      expect(sequence).to.deep.include({ status: 'paused', version: null, steps: [], exitWhen: [], sendingWindow: null });
      expect(await definitionRows()).to.deep.equal({ sequences: 1, versions: 0 });
    });

    it('answers 400 naming an unknown top-level field, storing nothing', async () => {
      const { key } = await buildTenant();
      const res = await api(key).post('/sequences').send({ name: 'S', steps: WAIT_THEN_EXIT, colour: 'red' });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.details).to.deep.equal([{ path: 'colour', message: 'Unknown field' }]);
      expect(await definitionRows()).to.deep.equal({ sequences: 0, versions: 0 });
    });

    it('accepts a cycle through a wait', async () => {
      const { key } = await buildTenant();
      const steps = [
        { id: 'a', type: 'tag', add: ['x'] },
        { id: 'w', type: 'wait', duration: 'PT1H' },
        { id: 'b', type: 'branch', if: { field: 'plan', equals: 'pro' }, then: 'end', else: 'a' },
        { id: 'end', type: 'exit' },
      ];
      expect((await create(key, { steps })).steps).to.deep.equal(steps);
    });

    it('answers 400 validation_failed naming the field for each bad definition, storing nothing', async () => {
      const { key } = await buildTenant();
      const cases = await badDefinitions();
      const before = await definitionRows();
      for (const bad of cases) {
        const res = await api(key).post('/sequences').send({ name: 'Bad', ...bad.body });
        expectError(res, 400, 'validation_failed');
        expect(res.body.details, bad.what).to.be.an('array').that.is.not.empty;
        expect(res.body.details[0].path, bad.what).to.equal(bad.path);
        expect(res.body.details[0].message, bad.what).to.match(bad.message);
        expect(res.body.error, bad.what).to.match(bad.message);
        expect(await definitionRows(), bad.what).to.deep.equal(before);
      }
    });

    it('answers 400 for wrong JSON types: no name, a number for a name, a string for steps, malformed JSON', async () => {
      const { key } = await buildTenant();
      const bodies: Array<[unknown, string]> = [
        [{ steps: [] }, 'name'],
        [{ name: 42 }, 'name'],
        [{ name: 'x', steps: 'wait' }, 'steps'],
        [{ name: 'x', exitWhen: { tag: 'x' } }, 'exitWhen'],
        [{ name: 'x', status: 'running' }, 'status'],
      ];
      for (const [body, path] of bodies) {
        const res = await api(key).post('/sequences').send(body as object);
        expectError(res, 400, 'validation_failed', new RegExp(`^${path}: `));
        expect(res.body.details[0].path).to.equal(path);
      }
      const malformed = await api(key).post('/sequences').set('content-type', 'application/json').send('{"name": "x", "steps": [');
      expectError(malformed, 400, 'malformed_json');
      expect(await definitionRows()).to.deep.equal({ sequences: 0, versions: 0 });
    });

    it('answers 401 without a key, storing nothing', async () => {
      expectError(await api().post('/sequences').send({ name: 'x', steps: WAIT_THEN_EXIT }), 401, 'missing_api_key', 'Missing x-api-key header');
      expect(await definitionRows()).to.deep.equal({ sequences: 0, versions: 0 });
    });
  });

  describe('PATCH /sequences/:id', () => {
    it('answers 200 with the changed sequence: name and status; new steps make version 2, the same steps do not', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT });
      const renamed = await api(key).patch(`/sequences/${sequence.id}`).send({ name: 'Renamed', status: 'active' });
      expectJson(renamed, 200);
      expect(renamed.body.sequence).to.have.all.keys(...SEQUENCE_KEYS);
      expect(renamed.body.sequence).to.include({ id: sequence.id, name: 'Renamed', status: 'active', version: 1 });

      const same = await api(key).patch(`/sequences/${sequence.id}`).send({ steps: WAIT_THEN_EXIT });
      expectJson(same, 200);
      expect(same.body).to.deep.equal(renamed.body);

      const steps = [{ id: 'w2', type: 'wait', duration: 'PT12H' }];
      const changed = await api(key).patch(`/sequences/${sequence.id}`).send({ steps });
      expectJson(changed, 200);
      expect(changed.body.sequence).to.deep.include({ version: 2, steps });
      expect(await storedVersions(sequence.id)).to.deep.equal([
        { version: 1, steps: WAIT_THEN_EXIT },
        { version: 2, steps },
      ]);
      expect((await api(key).get(`/sequences/${sequence.id}`)).body).to.deep.equal(changed.body);
    });

    it('sets exitWhen and sendingWindow, and clears them with [] and null', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, {});
      const window = { timeZone: 'Europe/London', weekdays: ['sat', 'sun'] };
      const set = await api(key).patch(`/sequences/${sequence.id}`).send({ exitWhen: [{ tag: 'gone' }], sendingWindow: window });
      expectJson(set, 200);
      expect(set.body.sequence).to.deep.include({ exitWhen: [{ tag: 'gone' }], sendingWindow: window });
      const cleared = await api(key).patch(`/sequences/${sequence.id}`).send({ exitWhen: [], sendingWindow: null });
      expectJson(cleared, 200);
      expect(cleared.body.sequence).to.deep.include({ exitWhen: [], sendingWindow: null });
      expect((await api(key).get(`/sequences/${sequence.id}`)).body).to.deep.equal(cleared.body);
    });

    it('keeps a run on its version; moveRuns with a stepMap moves it to version 2 at the mapped step', async () => {
      const { key, sequence, runId } = await enrolled();
      const newSteps = [{ id: 'w2', type: 'wait', duration: 'PT1H' }, { id: 'end', type: 'exit' }];
      expectJson(await api(key).patch(`/sequences/${sequence.id}`).send({ steps: newSteps }), 200);
      let run = (await api(key).get(`/sequences/${sequence.id}/runs/${runId}`)).body.run;
      expect(run).to.include({ version: 1, currentStepId: 'w1' });

      const moved = await api(key).patch(`/sequences/${sequence.id}`).send({ moveRuns: { stepMap: { w1: 'w2' } } });
      expectJson(moved, 200);
      expect(moved.body.sequence).to.include({ version: 2, activeRuns: 1 });
      run = (await api(key).get(`/sequences/${sequence.id}/runs/${runId}`)).body.run;
      expect(run).to.include({ status: 'pending', version: 2, currentStepId: 'w2' });
    });

    it('answers 400 when a run is at a step the map cannot place, or a map target is not a step; nothing changes', async () => {
      const { key, sequence, runId } = await enrolled();
      const before = await definitionRows();
      const steps = [{ id: 'w2', type: 'wait', duration: 'PT1H' }];
      const unplaced = await api(key).patch(`/sequences/${sequence.id}`).send({ name: 'New', steps, moveRuns: { stepMap: {} } });
      expectError(unplaced, 400, 'validation_failed', /step "w1" of version 1/);
      expect(unplaced.body.details[0].path).to.equal('moveRuns.stepMap');
      const target = await api(key).patch(`/sequences/${sequence.id}`).send({ steps, moveRuns: { stepMap: { w1: 'nowhere' } } });
      expectError(target, 400, 'validation_failed', /"nowhere" is not a step of version 2/);
      expect(target.body.details[0].path).to.equal('moveRuns.stepMap.w1');

      expect(await definitionRows()).to.deep.equal(before);
      expect((await api(key).get(`/sequences/${sequence.id}`)).body.sequence).to.deep.include({ name: 'Welcome', version: 1, steps: WAIT_THEN_EXIT });
      expect((await api(key).get(`/sequences/${sequence.id}/runs/${runId}`)).body.run).to.include({ version: 1, currentStepId: 'w1' });
    });

    it('answers 400 naming the field for each bad definition, changing nothing', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT });
      const cases = await badDefinitions();
      const before = await definitionRows();
      for (const bad of cases) {
        const res = await api(key).patch(`/sequences/${sequence.id}`).send({ name: 'Changed', ...bad.body });
        expectError(res, 400, 'validation_failed', bad.message);
        expect(res.body.details[0].path, bad.what).to.equal(bad.path);
        expect(await definitionRows(), bad.what).to.deep.equal(before);
      }
      expect((await api(key).get(`/sequences/${sequence.id}`)).body.sequence).to.deep.equal(sequence);
    });

    it('answers 404 for an unknown id, a non-UUID id and another account\'s sequence; 401 without a key', async () => {
      const { key } = await buildTenant();
      const other = await buildTenant();
      const theirs = await create(other.key, { steps: WAIT_THEN_EXIT });
      for (const id of [randomUUID(), 'not-a-uuid', theirs.id]) {
        const res = await api(key).patch(`/sequences/${id}`).send({ name: 'Mine', steps: [{ type: 'exit' }] });
        expectError(res, 404, 'not_found', 'Sequence not found');
      }
      expectError(await api().patch(`/sequences/${theirs.id}`).send({ name: 'Mine' }), 401, 'missing_api_key');
      expect((await api(other.key).get(`/sequences/${theirs.id}`)).body.sequence).to.deep.equal(theirs);
    });
  });

  describe('GET /sequences/:id/runs/:runId', () => {
    it('answers 200 with the run, its version and step, and executions [] before the engine ran; then its executions', async () => {
      const { key, sequence, contact, runId } = await enrolled();
      const res = await api(key).get(`/sequences/${sequence.id}/runs/${runId}`);
      expectJson(res, 200);
      expect(res.body).to.have.all.keys('run');
      expect(res.body.run).to.have.all.keys(...RUN_DETAIL_KEYS);
      expect(res.body.run).to.deep.include({
        id: runId,
        sequenceId: sequence.id,
        contactId: contact.id,
        status: 'pending',
        version: 1,
        currentStepId: 'w1',
        reason: null,
        completedAt: null,
        waitingFor: null,
        retry: null,
        executions: [],
      });
      expect(res.body.run.dueAt).to.match(ISO);

      const { engine } = engineNow();
      await engine.runOnce();
      const after = await api(key).get(`/sequences/${sequence.id}/runs/${runId}`);
      expectJson(after, 200);
      expect(after.body.run).to.include({ status: 'running', currentStepId: 'w1' });
      expect(after.body.run.executions).to.have.length(1);
      expect(after.body.run.executions[0]).to.have.all.keys('stepId', 'type', 'attempt', 'status', 'reason', 'detail', 'startedAt', 'finishedAt', 'endsAt', 'message');
      expect(after.body.run.executions[0].message).to.equal(null);
      expect(after.body.run.executions[0]).to.include({ stepId: 'w1', type: 'wait', attempt: 1, status: 'running', finishedAt: null });
      expect(after.body.run.executions[0].startedAt).to.match(ISO);
      // The wait's end, P1D after it began: what the run waits for, and until when.
      const end = new Date(Date.parse(after.body.run.executions[0].startedAt) + 86_400_000).toISOString();
      expect(after.body.run.executions[0].endsAt).to.equal(end);
      expect(after.body.run).to.include({ waitingFor: 'wait', dueAt: end });
    });

    it('answers 404 for an unknown run, another sequence\'s run, non-UUID ids and an unknown sequence', async () => {
      const { key, accountId, sequence, runId } = await enrolled();
      const second = await create(key, { status: 'active' });
      const contact = await buildContact(accountId);
      await api(key).post(`/sequences/${second.id}/enroll`).send({ contactIds: [contact.id] });
      const secondRunId = (await api(key).get(`/sequences/${second.id}/runs`)).body.runs[0].id;
      for (const path of [`/sequences/${sequence.id}/runs/${randomUUID()}`, `/sequences/${sequence.id}/runs/${secondRunId}`, `/sequences/${sequence.id}/runs/not-a-uuid`]) {
        expectError(await api(key).get(path), 404, 'not_found', 'Run not found');
      }
      for (const path of [`/sequences/${randomUUID()}/runs/${runId}`, `/sequences/not-a-uuid/runs/${runId}`]) {
        expectError(await api(key).get(path), 404, 'not_found', 'Sequence not found');
      }
      expectError(await api().get(`/sequences/${sequence.id}/runs/${runId}`), 401, 'missing_api_key');
    });
  });

  describe('POST /sequences/:id/runs/:runId/pause and /resume', () => {
    async function moves(accountId: string, runId: string) {
      const { events } = await listEvents(testDb(), { accountId, type: 'run.status_changed', limit: 100 });
      return events.map((e) => e.data as { run: { id: string }; from: string; to: string }).filter((d) => d.run.id === runId).map((d) => `${d.from}->${d.to}`);
    }

    it('pending -> paused -> pending: 200 with the run each time, and the moves recorded as events', async () => {
      const { key, accountId, sequence, runId } = await enrolled();
      const paused = await api(key).post(`/sequences/${sequence.id}/runs/${runId}/pause`);
      expectJson(paused, 200);
      expect(paused.body).to.have.all.keys('run');
      expect(paused.body.run).to.have.all.keys(...RUN_KEYS);
      expect(paused.body.run).to.include({ id: runId, status: 'paused', version: 1, currentStepId: 'w1', completedAt: null });
      const resumed = await api(key).post(`/sequences/${sequence.id}/runs/${runId}/resume`);
      expectJson(resumed, 200);
      expect(resumed.body.run).to.include({ id: runId, status: 'pending', currentStepId: 'w1' });
      expect(await moves(accountId, runId)).to.deep.equal(['pending->paused', 'paused->pending']);
    });

    it('running -> paused -> running', async () => {
      const { key, accountId, sequence, runId } = await enrolled();
      const { engine } = engineNow();
      await engine.runOnce();
      const paused = await api(key).post(`/sequences/${sequence.id}/runs/${runId}/pause`);
      expectJson(paused, 200);
      expect(paused.body.run).to.include({ status: 'paused', currentStepId: 'w1' });
      const resumed = await api(key).post(`/sequences/${sequence.id}/runs/${runId}/resume`);
      expectJson(resumed, 200);
      expect(resumed.body.run).to.include({ status: 'running', currentStepId: 'w1' });
      expect(await moves(accountId, runId)).to.deep.equal(['pending->running', 'running->paused', 'paused->running']);
    });

    it('answers 409 invalid_run_transition to pause a paused, completed or cancelled run, or resume a pending one', async () => {
      const { key, sequence, runId, contact } = await enrolled();
      const pause = () => api(key).post(`/sequences/${sequence.id}/runs/${runId}/pause`);
      const resume = () => api(key).post(`/sequences/${sequence.id}/runs/${runId}/resume`);
      expectError(await resume(), 409, 'invalid_run_transition', 'A pending run cannot be resumed: only a paused one');
      expectJson(await pause(), 200);
      expectError(await pause(), 409, 'invalid_run_transition', 'A paused run cannot be paused');
      expectJson(await api(key).post(`/sequences/${sequence.id}/unenroll`).send({ contactIds: [contact.id] }), 200);
      expectError(await pause(), 409, 'invalid_run_transition', 'A cancelled run cannot be paused');
      expectError(await resume(), 409, 'invalid_run_transition', 'A cancelled run cannot be resumed: only a paused one');

      const done = await enrolled([{ type: 'exit' }]);
      await engineNow().engine.runUntilIdle();
      expect((await api(done.key).get(`/sequences/${done.sequence.id}/runs/${done.runId}`)).body.run.status).to.equal('completed');
      expectError(await api(done.key).post(`/sequences/${done.sequence.id}/runs/${done.runId}/pause`), 409, 'invalid_run_transition', 'A completed run cannot be paused');
    });

    it('answers 404 for unknown or non-UUID runs and sequences, and another sequence\'s run', async () => {
      const { key, sequence, runId } = await enrolled();
      const other = await enrolled();
      for (const action of ['pause', 'resume']) {
        for (const run of [randomUUID(), 'not-a-uuid', other.runId]) {
          expectError(await api(key).post(`/sequences/${sequence.id}/runs/${run}/${action}`), 404, 'not_found', 'Run not found');
        }
        for (const id of [randomUUID(), 'not-a-uuid', other.sequence.id]) {
          expectError(await api(key).post(`/sequences/${id}/runs/${runId}/${action}`), 404, 'not_found', 'Sequence not found');
        }
      }
      expect((await api(other.key).get(`/sequences/${other.sequence.id}/runs/${other.runId}`)).body.run.status).to.equal('pending');
    });
  });

  describe('run lists', () => {
    it('GET /sequences/:id/runs and GET /contacts/:id/runs show version and currentStepId', async () => {
      const { key, sequence, contact, runId } = await enrolled();
      const bySequence = await api(key).get(`/sequences/${sequence.id}/runs`);
      expectJson(bySequence, 200);
      expect(bySequence.body.runs).to.have.length(1);
      expect(bySequence.body.runs[0]).to.include({ id: runId, version: 1, currentStepId: 'w1', reason: null });
      const byContact = await api(key).get(`/contacts/${contact.id}/runs`);
      expectJson(byContact, 200);
      expect(byContact.body.runs).to.have.length(1);
      expect(byContact.body.runs[0]).to.include({ id: runId, sequenceId: sequence.id, version: 1, currentStepId: 'w1' });
    });
  });

  describe('entry and goal', () => {
    const ENTRY = { activity: 'cart_abandoned', where: [{ property: 'total', gte: 20 }], reentry: { after: 'P30D' } };
    const GOAL = { activity: 'order_placed', within: 'P7D' };

    it('stores entry and goal, answers them on GET, and PATCH null removes each', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { steps: WAIT_THEN_EXIT, entry: ENTRY, goal: GOAL });
      expect(sequence).to.deep.include({ entry: ENTRY, goal: GOAL });
      expect((await api(key).get(`/sequences/${sequence.id}`)).body.sequence).to.deep.include({ entry: ENTRY, goal: GOAL });
      const cleared = await api(key).patch(`/sequences/${sequence.id}`).send({ entry: null });
      expectJson(cleared, 200);
      expect(cleared.body.sequence).to.deep.include({ entry: null, goal: GOAL });
      const both = await api(key).patch(`/sequences/${sequence.id}`).send({ goal: null });
      expect(both.body.sequence).to.deep.include({ entry: null, goal: null });
      expect((await create(key, {})).entry).to.equal(null);
    });

    it('enrolls by REST: the run exists when POST /activities answers 202, with the activity as its trigger', async () => {
      const { key } = await buildTenant();
      const sequence = await create(key, { status: 'active', steps: WAIT_THEN_EXIT, entry: ENTRY });
      const small = await api(key).post('/activities').send({ contact: { email: 'ann@example.com' }, name: 'cart_abandoned', properties: { total: 5 } });
      expectJson(small, 202);
      expect((await api(key).get(`/sequences/${sequence.id}/runs`)).body.runs).to.deep.equal([]);
      const big = await api(key).post('/activities').send({ contact: { email: 'ann@example.com' }, name: 'cart_abandoned', properties: { total: 25 } });
      expectJson(big, 202);
      const runs = (await api(key).get(`/sequences/${sequence.id}/runs`)).body.runs;
      expect(runs).to.have.length(1);
      expect(runs[0]).to.include({ contactId: big.body.activity.contactId, status: 'pending' });
    });
  });
});
