import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { getContact } from '../../../src/services/contacts/find-contact';
import { recordBatch } from '../../../src/services/engine/record-batch';
import { planRun } from '../../../src/services/engine/plan-run';
import { claimDueRuns, loadClaimedRuns } from '../../../src/services/engine/run-queue';
import { listEvents } from '../../../src/services/events/list-events';
import { readSteps } from '../../../src/services/runs/sequence-versions';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';
import { dispatchAndDie, engineAt, enrolledRun } from './support';

// Crashes, expired leases and engines side by side (docs/sequences.md "Exactly once"): the
// database decides who holds a run; a step is recorded once; an outside effect repeats only
// with the same key.

const LEASE_MS = 60_000;
const settings = { allowInsecure: true, now: () => new Date() };

async function succeededCount(runId: string): Promise<number> {
  const [row] = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM run_step_executions WHERE run_id = ? AND status = 'succeeded'", [runId]);
  return Number(row!.n);
}

describe('sequence engine: crashes and concurrency', () => {
  it('a worker killed between its request and its record: the lease ends, another worker sends again with the same webhook id', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, settings);
      const run = await enrolledRunFor(tenant, [{ id: 'hook', type: 'webhook', endpointId: webhook.id }]);
      const start = Date.now() + 1;
      // The first worker: claims, begins the step (its send queued), sends, and dies before
      // recording the answer.
      const claim = await claimDueRuns(testDb(), new Date(start), { limit: 10, leaseMs: LEASE_MS });
      const [claimed] = await loadClaimedRuns(testDb(), claim);
      const steps = await readSteps(testDb(), claimed!.sequenceId, claimed!.version);
      await recordBatch(testDb(), [planRun(claimed!, steps, new Date(start))], new Date(start));
      await dispatchAndDie(new Date(start), { leaseMs: LEASE_MS });
      expect(receiver.received).to.have.length(1);

      // Before the lease ends nobody else takes it.
      const { engine, advance } = engineAt(start);
      advance(LEASE_MS - 1);
      expect(await engine.runOnce()).to.equal(0);
      advance(2);
      await engine.runUntilIdle();
      expect(receiver.received).to.have.length(2);
      expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
      const detail = await run.timeline();
      expect(detail.status).to.equal('completed');
      expect(detail.executions.map((e) => [e.attempt, e.status])).to.deep.equal([
        [1, 'failed'],
        [2, 'succeeded'],
      ]);
      expect(detail.executions[0]!.reason).to.match(/^interrupted/);
      expect(await succeededCount(run.runId)).to.equal(1);
    } finally {
      await receiver.close();
    }
  });

  it('a worker whose lease ran out cannot record over the worker that took the run after it', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['once'] }, { id: 'end', type: 'exit' }]);
    const start = Date.now() + 1;
    const staleClaim = await claimDueRuns(testDb(), new Date(start), { limit: 10, leaseMs: LEASE_MS });
    const [stale] = await loadClaimedRuns(testDb(), staleClaim);
    const steps = await readSteps(testDb(), stale!.sequenceId, stale!.version);
    const { engine, advance } = engineAt(start);
    advance(LEASE_MS + 1);
    await engine.runUntilIdle();
    expect((await run.timeline()).status).to.equal('completed');
    // The stalled worker wakes up and records what it did: nothing of it is written.
    await recordBatch(testDb(), [planRun(stale!, steps, new Date(start)) as never], new Date(start));
    const detail = await run.timeline();
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['mark', 'succeeded'],
      ['end', 'succeeded'],
    ]);
    const updates = await listEvents(testDb(), { accountId: run.accountId, type: 'contact.updated', limit: 10 });
    expect(updates.events).to.have.length(1);
  });

  it('two engines side by side take each run once: every step recorded once, every contact changed once', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Side by side',
      status: 'active',
      steps: [{ id: 'mark', type: 'tag', add: ['seen'] }, { id: 'end', type: 'exit' }],
    });
    const contacts = await Promise.all(Array.from({ length: 120 }, () => buildContact(tenant.accountId)));
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
    const start = Date.now() + 1;
    const one = engineAt(start, { batchSize: 25 });
    const two = engineAt(start, { batchSize: 25 });
    await Promise.all([one.engine.runUntilIdle(), two.engine.runUntilIdle()]);
    const [counts] = await select<{ runs: number | string; succeeded: number | string }>(
      testDb(),
      `SELECT (SELECT COUNT(*) FROM sequence_runs WHERE sequence_id = ? AND status = 'completed') AS runs,
              (SELECT COUNT(*) FROM run_step_executions e JOIN sequence_runs r ON r.id = e.run_id WHERE r.sequence_id = ? AND e.status = 'succeeded') AS succeeded`,
      [sequence.id, sequence.id],
    );
    expect(Number(counts!.runs)).to.equal(120);
    expect(Number(counts!.succeeded)).to.equal(240);
    const updates = await listEvents(testDb(), { accountId: tenant.accountId, type: 'contact.updated', limit: 500 });
    expect(updates.events).to.have.length(120);
    expect((await getContact(testDb(), { accountId: tenant.accountId, id: contacts[7]!.id })).tags).to.deep.equal(['seen']);
  });

  it('a webhook step that keeps failing is retried with backoff, then fails the run with the step and the reason', async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, settings);
      const run = await enrolledRunFor(tenant, [{ id: 'hook', type: 'webhook', endpointId: webhook.id }]);
      const { engine, advance } = engineAt();
      for (let pass = 0; pass < 10; pass += 1) {
        await engine.runOnce();
        advance(2 * 3_600_000);
      }
      const detail = await run.timeline();
      expect(detail.status).to.equal('failed');
      expect(detail.currentStepId).to.equal('hook');
      expect(detail.reason).to.equal('step "hook": the receiver answered 503');
      expect(detail.executions.map((e) => e.status)).to.deep.equal(['failed', 'failed', 'failed', 'failed', 'failed', 'failed']);
      expect(receiver.received).to.have.length(6);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).to.equal(1);
      const failed = await listEvents(testDb(), { accountId: tenant.accountId, type: 'run.step_failed', limit: 10 });
      expect(failed.events.map((e) => (e.data as { retryAt: string | null }).retryAt === null)).to.deep.equal([false, false, false, false, false, true]);
    } finally {
      await receiver.close();
    }
  });

  it('a receiver that never answers costs the timeout; the attempt fails and is retried', async () => {
    const receiver = await startReceiver(() => 'hang');
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, settings);
      const run = await enrolledRunFor(tenant, [{ id: 'hook', type: 'webhook', endpointId: webhook.id }]);
      const { engine } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 200, allowInsecure: true } });
      await engine.runOnce();
      const detail = await run.timeline();
      expect(detail.status).to.equal('running');
      expect(detail.executions[0]).to.include({ status: 'failed', reason: 'timeout after 200 ms' });
    } finally {
      await receiver.close();
    }
  });

  it('sleeps until the next due time, and wakes at once when this process enrolls', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT30S' }]);
    const { engine, clock } = engineAt();
    engine.start();
    try {
      // The wait began: nothing due for 30 s, so the engine looks again after its idle poll (1 s).
      expect(await clock.nextWait()).to.equal(1_000);
      const other = await buildContact(run.accountId);
      await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: [other.id] });
      expect(await clock.nextWait()).to.equal(0);
    } finally {
      await engine.stop(1_000);
    }
  });
});

async function enrolledRunFor(tenant: { key: string; accountId: string }, steps: unknown[]) {
  const { sequence } = await caller(tenant.key).sequences.create({ name: 'Crash', status: 'active', steps } as never);
  const contact = await buildContact(tenant.accountId);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
  const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
  return {
    runId: run!.id,
    timeline: async () => (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run,
  };
}
