import { expect } from 'chai';
import request from 'supertest';
import type { Response } from 'supertest';
import { api, testApp } from '../support/app';
import { buildContact, buildTenant } from '../support/factories';
import { engineNow, storedVersions } from '../support/sequence-definitions';
import { storedRuns } from '../support/sequence-rows';

// The edges of definitions, versions and the API that a new user met (issue 27, section 11),
// over REST (and tRPC where the error's shape matters): statuses and bodies. What each stores:
// test/procedures/sequence-versions.test.ts, enroll-exit-rules.test.ts,
// webhook-endpoint-in-use.test.ts, run-waiting.test.ts, definition-messages.test.ts.

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectError(res: Response, status: number, code: string, keys: string[] = ['error', 'code', 'requestId']) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.have.all.keys(...keys);
  expect(res.body).to.include({ code, requestId: res.headers['x-request-id'] });
}

async function created(key: string, body: Record<string, unknown>) {
  const res = await api(key).post('/sequences').send({ name: 'Edges', ...body });
  expect(res.status, res.text).to.equal(201);
  return res.body.sequence as { id: string; version: number; steps: Array<{ id: string }>; updatedAt: string };
}

describe('definitions, versions and API edges (REST)', () => {
  it('PATCH with the same steps without ids, in another key order, answers version 1; so does the original', async () => {
    const { key } = await buildTenant();
    const v1 = [{ id: 'a', type: 'wait', duration: 'PT2S' }, { id: 'b', type: 'tag', add: ['x'] }];
    const sequence = await created(key, { steps: v1 });
    const idless = await api(key)
      .patch(`/sequences/${sequence.id}`)
      .set('content-type', 'application/json')
      .send('{"steps":[{"duration":"PT2S","type":"wait"},{"add":["x"],"type":"tag"}]}');
    expect(idless.status, idless.text).to.equal(200);
    expect(idless.body).to.have.all.keys('sequence');
    expect(idless.body.sequence).to.include({ version: 1, updatedAt: sequence.updatedAt });
    expect(idless.body.sequence.steps).to.deep.equal(v1);
    const original = await api(key).patch(`/sequences/${sequence.id}`).send({ steps: v1 });
    expect(original.body.sequence.version).to.equal(1);
    expect(await storedVersions(sequence.id)).to.have.length(1);
  });

  describe('a contact that already meets an exit rule', () => {
    it('trigger answers 202 exit_rule_met, enroll-by-email 200, enroll 201 with the failure; no run', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await created(key, { status: 'active', steps: [{ id: 'w', type: 'wait', duration: 'P1D' }], exitWhen: [{ tag: 'purchased' }] });
      const contact = await buildContact(accountId, { tags: ['purchased'] });

      const triggered = await api(key).post(`/sequences/${sequence.id}/trigger`).send({ contact: { email: contact.email } });
      expect(triggered.status, triggered.text).to.equal(202);
      expect(triggered.body).to.deep.equal({ enrolled: false, reason: 'exit_rule_met', contactId: contact.id });

      const byEmail = await api(key).post(`/sequences/${sequence.id}/enroll-by-email`).send({ email: contact.email });
      expect(byEmail.status, byEmail.text).to.equal(200);
      expect(byEmail.body).to.deep.equal({ enrolled: false, reason: 'exit_rule_met', contactId: contact.id });

      const enrolled = await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id] });
      expect(enrolled.status, enrolled.text).to.equal(201);
      expect(enrolled.body.summary).to.deep.equal({
        processed: 1,
        successful: 0,
        failed: 1,
        skipped: 0,
        failures: [{ contactId: contact.id, reason: 'exit_rule_met' }],
      });
      expect(await storedRuns({ accountId })).to.deep.equal([]);
    });
  });

  describe('emptying the steps, and moving runs', () => {
    it('answers 400 at steps while a run is at a step; a move answers moved', async () => {
      const { key, accountId } = await buildTenant();
      const sequence = await created(key, { status: 'active', steps: [{ id: 'w', type: 'wait', duration: 'P1D' }] });
      const contact = await buildContact(accountId);
      await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id] }).expect(201);

      const emptied = await api(key).patch(`/sequences/${sequence.id}`).send({ steps: [] });
      expectError(emptied, 400, 'validation_failed', ['error', 'code', 'requestId', 'details']);
      const message =
        '1 active run is at steps of this sequence: an empty list would leave it, and runs started later, with no step to go to. ' +
        'Keep at least one step, set the status to "paused" to stop the sequence, or unenroll those runs first';
      expect(emptied.body.error).to.equal(`steps: ${message}`);
      expect(emptied.body.details).to.deep.equal([{ path: 'steps', message }]);

      const moved = await api(key).patch(`/sequences/${sequence.id}`).send({ steps: [{ id: 'w2', type: 'wait', duration: 'PT1H' }], moveRuns: { stepMap: { w: 'w2' } } });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body).to.have.all.keys('sequence', 'moved');
      expect(moved.body.moved).to.deep.equal([{ fromVersion: 1, runs: 1 }]);
      expect(moved.body.sequence.version).to.equal(2);
    });
  });

  describe('deleting a webhook endpoint a sequence uses', () => {
    it('answers 409 webhook_in_use with details on REST, and the same on tRPC; 204 once the steps changed', async () => {
      const { key } = await buildTenant();
      const hook = await api(key).post('/webhooks').send({ url: 'https://hooks.example.com/a' });
      const endpointId = hook.body.webhook.id as string;
      const sequence = await created(key, { status: 'active', steps: [{ id: 'notify', type: 'webhook', endpointId }] });
      const error =
        'The webhook endpoint is used by the sequence "Edges" (step "notify"): change those steps, or archive the sequence, before deleting it';
      const details = [{ path: `sequences.${sequence.id}.steps.0`, message: 'Step 1 "notify" of the active sequence "Edges" (version 1) sends to this endpoint' }];

      const refused = await api(key).delete(`/webhooks/${endpointId}`);
      expectError(refused, 409, 'webhook_in_use', ['error', 'code', 'requestId', 'details']);
      expect(refused.body).to.deep.include({ error, details });

      const rpc = await request(testApp()).post('/trpc/webhooks.delete').set('x-api-key', key).send({ id: endpointId });
      expect(rpc.status).to.equal(409);
      expect(rpc.body.error.message).to.equal(error);
      expect(rpc.body.error.data).to.deep.include({ appCode: 'webhook_in_use', httpStatus: 409, details });

      await api(key).patch(`/sequences/${sequence.id}`).send({ steps: [{ id: 'mark', type: 'tag', add: ['x'] }] }).expect(200);
      const deleted = await api(key).delete(`/webhooks/${endpointId}`);
      expect(deleted.status, deleted.text).to.equal(204);
    });
  });

  it('GET a run says what it waits for and until when; its wait shows when it ends', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await created(key, { status: 'active', steps: [{ id: 'w', type: 'wait', duration: 'PT2H' }] });
    const contact = await buildContact(accountId);
    await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id] }).expect(201);
    const { engine } = engineNow();
    await engine.runOnce();
    const list = await api(key).get(`/sequences/${sequence.id}/runs`);
    const runId = list.body.runs[0].id as string;
    const res = await api(key).get(`/sequences/${sequence.id}/runs/${runId}`);
    expect(res.status, res.text).to.equal(200);
    const [wait] = res.body.run.executions;
    const end = new Date(Date.parse(wait.startedAt) + 7_200_000).toISOString();
    expect(res.body.run).to.include({ waitingFor: 'wait', dueAt: end });
    expect(wait).to.include({ status: 'running', endsAt: end });
    expect(list.body.runs[0]).to.include({ waitingFor: 'wait', dueAt: end });
    expect(end).to.match(ISO);
    const ofContact = await api(key).get(`/contacts/${contact.id}/runs`);
    expect(ofContact.body.runs[0]).to.include({ waitingFor: 'wait', dueAt: end });
  });

  describe('messages that name the problem', () => {
    it('a branch condition, an exit rule, a weekday twice, a cycle, a step without an id', async () => {
      const { key } = await buildTenant();
      const cases: Array<[Record<string, unknown>, string]> = [
        [
          { steps: [{ id: 'b', type: 'branch', if: { colour: 'red' }, then: 'end', else: 'end' }, { id: 'end', type: 'exit' }] },
          'steps.0.if: A condition is one of { "tag": "…" }, { "field": "…", "equals": any JSON }, { "field": "…", "exists": true or false }, ' +
            '{ "channel": "email" or "whatsapp", "status": "subscribed" or "unsubscribed" } or, on the run\'s trigger, { "property": "…" } with one of ' +
            'equals, in, exists, gt, gte, lt or lte; got an object with "colour"',
        ],
        [{ exitWhen: [{ bounced: 'email' }] }, 'exitWhen.0: An exit rule is { "tag": "…" } or { "unsubscribed": "email" or "whatsapp" }; got an object with "bounced"'],
        [{ sendingWindow: { timeZone: 'UTC', weekdays: ['sat', 'sat'] } }, 'sendingWindow.weekdays.1: "sat" is listed twice: name each weekday once'],
        [
          { steps: [{ id: 'a', type: 'tag', add: ['x'] }, { id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'a', else: 'end' }, { id: 'end', type: 'exit' }] },
          'Step "b": its then goes back to step "a", closing the cycle "a" -> "b" -> "a" with no wait step on it',
        ],
        [{ steps: [{ id: 'w', type: 'wait', duration: 'PT1H' }, { id: 'x', type: 'exit' }, { type: 'tag', add: [] }] }, 'Step 3 (tag): give at least one tag to add or remove'],
      ];
      for (const [body, error] of cases) {
        const res = await api(key).post('/sequences').send({ name: 'Bad', ...body });
        expectError(res, 400, 'validation_failed', ['error', 'code', 'requestId', 'details']);
        expect(res.body.error).to.equal(error);
      }
    });
  });
});
