import { expect } from 'chai';
import { execute } from '../../../src/db/sql/statements';
import { getRunPage } from '../../../src/services/sequences/run-page';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { listStepCalls } from '../../../src/services/webhooks/step-calls';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt } from '../engine/support';

// What a person reads about a webhook step that keeps failing (issue 29, "Run timeline"): the
// run's timeline says it is retrying, how often it failed, why, and when it tries again; the
// endpoint's step calls list every attempt; the run's page names the endpoint by its URL, and
// says when the endpoint is gone.

const settings = { allowInsecure: true, now: () => new Date() };
const RETRIES_MS = [5_000, 30_000, 120_000, 600_000];

async function failingWebhookRun() {
  const receiver = await startReceiver(() => 500);
  const tenant = await buildTenant();
  const endpointId = (await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, settings)).webhook.id;
  const { sequence } = await caller(tenant.key).sequences.create({
    name: 'Hook',
    status: 'active',
    steps: [{ id: 'hook', type: 'webhook', endpointId }],
  });
  const contact = await buildContact(tenant.accountId);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  const { engine, advance, now } = engineAt();
  await engine.runUntilIdle();
  for (const wait of RETRIES_MS) {
    advance(wait + 1);
    await engine.runUntilIdle();
  }
  return { receiver, tenant, endpointId, sequence, contact, runId: run!.id, now };
}

describe('a run whose webhook step keeps failing, as its pages read it', () => {
  it('says the run is retrying, with five attempts, the last error and the next attempt at the send\'s due time', async () => {
    const { receiver, tenant, sequence, runId, now } = await failingWebhookRun();
    try {
      expect(receiver.received).to.have.length(5);
      const { run } = await caller(tenant.key).sequences.run({ id: sequence.id, runId });
      expect(run).to.include({ status: 'running', currentStepId: 'hook', waitingFor: 'retry' });
      expect(run.retry).to.include({ attempts: 5, lastError: 'the receiver answered 500' });
      // The sixth attempt, an hour after the fifth (random 0.5: no jitter).
      const fifth = run.executions[4]!;
      expect(run.executions.map((e) => [e.attempt, e.status])).to.deep.equal([1, 2, 3, 4, 5].map((n) => [n, 'failed']));
      expect(Date.parse(run.retry!.nextAttemptAt!)).to.equal(Date.parse(fifth.finishedAt!) + 3_600_000);
      expect(run.dueAt).to.equal(run.retry!.nextAttemptAt);
      expect(Date.parse(run.retry!.nextAttemptAt!)).to.be.greaterThan(now());
    } finally {
      await receiver.close();
    }
  });

  it('has no next attempt while paused, keeps the last error, the same next attempt once resumed, and no retry once cancelled', async () => {
    const { receiver, tenant, sequence, runId, endpointId } = await failingWebhookRun();
    try {
      const before = (await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.retry!;
      await caller(tenant.key).sequences.pauseRun({ id: sequence.id, runId });
      const { run } = await caller(tenant.key).sequences.run({ id: sequence.id, runId });
      expect(run.retry).to.deep.equal({ attempts: 5, lastError: 'the receiver answered 500', nextAttemptAt: null });
      // Resumed: the send is queued again at its own time, later than now.
      expect((await listStepCalls(testDb(), { accountId: tenant.accountId, id: endpointId, limit: 1 }, settings))[0]!.nextAttemptAt).to.equal(null);
      await caller(tenant.key).sequences.resumeRun({ id: sequence.id, runId });
      expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.retry).to.deep.equal(before);
      expect((await listStepCalls(testDb(), { accountId: tenant.accountId, id: endpointId, limit: 1 }, settings))[0]!.nextAttemptAt).to.equal(before.nextAttemptAt);
      // Its sequence set to draft: no attempt until it is active again, when the time is back.
      await caller(tenant.key).sequences.update({ id: sequence.id, status: 'draft' });
      expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run).to.deep.include({
        waitingFor: 'sequence_paused',
        retry: { ...before, nextAttemptAt: null },
      });
      await caller(tenant.key).sequences.update({ id: sequence.id, status: 'active' });
      expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.retry).to.deep.equal(before);
      await caller(tenant.key).sequences.unenroll({ id: sequence.id, contactIds: [run.contactId] });
      expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId })).run.retry).to.equal(null);
    } finally {
      await receiver.close();
    }
  });

  it("lists the step's five attempts among the endpoint's calls, newest first, the last with its next attempt", async () => {
    const { receiver, tenant, endpointId, sequence, runId } = await failingWebhookRun();
    try {
      const calls = await listStepCalls(testDb(), { accountId: tenant.accountId, id: endpointId, limit: 20 }, settings);
      expect(calls.map((call) => [call.attempt, call.status, call.responseStatus, call.error, call.stepId, call.runId, call.sequenceId])).to.deep.equal(
        [5, 4, 3, 2, 1].map((n) => [n, 'failed', 500, 'the receiver answered 500', 'hook', runId, sequence.id]),
      );
      const { run } = await caller(tenant.key).sequences.run({ id: sequence.id, runId });
      expect(calls[0]!.nextAttemptAt).to.equal(run.retry!.nextAttemptAt);
      expect(calls.slice(1).map((call) => call.nextAttemptAt)).to.deep.equal([null, null, null, null]);
      // Another account's endpoint id is not found; another endpoint of the account has none.
      const other = await buildTenant();
      expect(await listStepCalls(testDb(), { accountId: other.accountId, id: endpointId, limit: 20 }, settings).then(() => 'resolved', (error: Error) => error.message)).to.equal('Webhook not found');
      const quiet = (await createWebhook(testDb(), { accountId: tenant.accountId, url: 'http://127.0.0.1:9/x', events: ['webhook.test'] }, settings)).webhook.id;
      expect(await listStepCalls(testDb(), { accountId: tenant.accountId, id: quiet, limit: 20 }, settings)).to.deep.equal([]);
    } finally {
      await receiver.close();
    }
  });

  it("names the endpoint's URL on the run's page, null once the endpoint is gone; another account's run is not found", async () => {
    const { receiver, tenant, endpointId, runId, contact } = await failingWebhookRun();
    try {
      const page = await getRunPage(testDb(), { accountId: tenant.accountId, runId });
      expect(page).to.include({ sequenceName: 'Hook', contactEmail: contact.email });
      expect(page.endpoints).to.deep.equal({ [endpointId]: receiver.url });
      expect(page.steps.map((step) => step.id)).to.deep.equal(['hook']);
      await execute(testDb(), 'DELETE FROM webhook_endpoints WHERE id = ?', [endpointId]);
      expect((await getRunPage(testDb(), { accountId: tenant.accountId, runId })).endpoints).to.deep.equal({ [endpointId]: null });
      const other = await buildTenant();
      expect(await getRunPage(testDb(), { accountId: other.accountId, runId }).then(() => 'resolved', (error: Error) => error.message)).to.equal('Run not found');
      expect(await getRunPage(testDb(), { accountId: tenant.accountId, runId: 'not-a-uuid' }).then(() => 'resolved', (error: Error) => error.message)).to.equal('Run not found');
    } finally {
      await receiver.close();
    }
  });
});
