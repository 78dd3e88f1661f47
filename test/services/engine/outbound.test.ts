import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { getContact } from '../../../src/services/contacts/find-contact';
import { listEvents } from '../../../src/services/events/list-events';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { driveUntil, engineAt, heldReceiver, releaseRecorded } from './support';

// The outbound layer (docs/sequences.md "The webhook step", docs/architecture.md "The outbound
// layer"): webhook steps queue a send in the outbox; dispatchers start them fairly per account
// and target and record each outcome as it arrives. Each test is a failure seen before it
// (issue 27, items 1, 2, 10, 11 and 12).

const settings = { allowInsecure: true, now: () => new Date() };

async function endpoint(accountId: string, url: string) {
  return (await createWebhook(testDb(), { accountId, url, events: ['webhook.test'] }, settings)).webhook.id;
}

async function webhookRuns(tenant: { key: string; accountId: string }, endpointId: string, count: number, name = 'Hook') {
  const { sequence } = await caller(tenant.key).sequences.create({ name, status: 'active', steps: [{ id: 'hook', type: 'webhook', endpointId }] });
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(tenant.accountId));
  if (count > 0) await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });
  const statuses = async () => (await caller(tenant.key).sequences.runs({ id: sequence.id, limit: 100 })).runs.map((run) => run.status);
  return { sequence, statuses };
}

async function sendRows(runId: string) {
  return select<{ status: string; attempt: number | string; idempotency_id: string }>(
    testDb(),
    'SELECT status, attempt, idempotency_id FROM outbox WHERE run_id = ? ORDER BY created_at',
    [runId],
  );
}

async function failedEvents(accountId: string) {
  return (await listEvents(testDb(), { accountId, type: 'run.step_failed', limit: 100 })).events.map((event) => event.data as { retryAt: string | null; execution: { attempt: number; reason: string } });
}

describe('the outbound layer', () => {
  it("a receiver that never answers holds only its own target's slots: another account's 30 webhook steps complete, and the loop does not spin", async () => {
    const frozen = await heldReceiver(() => 'hold');
    const fast = await heldReceiver(() => 204);
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true }, outbound: { maxInFlight: 20, perTarget: 10 } });
    try {
      const a = await buildTenant();
      const b = await buildTenant();
      await webhookRuns(a, await endpoint(a.accountId, frozen.url), 15, 'Frozen');
      const runsOfB = await webhookRuns(b, await endpoint(b.accountId, fast.url), 30, 'Fast');
      engine.start();
      const waits = await driveUntil(clock, async () => (await runsOfB.statuses()).every((status) => status === 'completed'));
      expect(fast.received).to.have.length(30);
      // Ten requests hang; the five other steps of that target wait for a slot, unclaimed.
      expect(frozen.received).to.have.length(10);
      // A pass that found nothing to start slept until the next look (the idle poll, 1 s)
      // instead of claiming and handing back at once.
      // (The first waits may still be wakes from the last outcomes recorded.)
      const after = (await driveUntil(clock, async () => false, 10).catch((error: Error) => error.message)) as string;
      const idle = after.replace(/^.*waits: /, '').split(', ').map(Number).slice(-5);
      expect(idle.every((wait) => wait >= 990), after).to.equal(true);
      expect(waits.filter((wait) => wait === 0).length, `waits: ${waits.join(', ')}`).to.be.at.most(40);
    } finally {
      await engine.stop(50);
      await frozen.close();
      await fast.close();
    }
  });

  it("holds an account to its rate: 6 webhook steps at 2 a second start over 2 seconds of the engine's clock, none dropped", async () => {
    const receiver = await heldReceiver(() => 204);
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 6);
    const { engine, clock } = engineAt(Date.now() + 1_000, { webhook: { timeoutMs: 600_000, allowInsecure: true }, outbound: { perAccountPerSecond: { webhook: 2 } } });
    try {
      const start = clock.now();
      engine.start();
      await driveUntil(clock, async () => (await statuses()).every((status) => status === 'completed'));
      const runs = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
      const starts: number[] = [];
      for (const run of runs) starts.push(Date.parse((await caller(tenant.key).sequences.run({ id: sequence.id, runId: run.id })).run.executions[0]!.startedAt) - start);
      // A bucket of one second's worth (2), refilled at 2 a second: by time t (ms), at most
      // 2 + 2t/1000 have started.
      starts.sort((a, b) => a - b);
      expect(starts.every((at, n) => at >= (n - 1) * 500), `starts (ms): ${starts.join(', ')}`).to.equal(true);
      expect(starts.at(-1)).to.be.at.least(2_000);
      expect(receiver.received).to.have.length(6);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it("a fast receiver's outcome is recorded as it arrives, not when a frozen one's request ends; each execution ends with its own request", async () => {
    const frozen = await heldReceiver(() => 'hold');
    const fast = await heldReceiver(() => 204);
    const tenant = await buildTenant();
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true } });
    try {
      const slow = await webhookRuns(tenant, await endpoint(tenant.accountId, frozen.url), 1, 'Slow');
      const quick = await webhookRuns(tenant, await endpoint(tenant.accountId, fast.url), 1, 'Quick');
      // Both due by the engine's clock: its first pass takes them together.
      clock.advance(1_000);
      const start = clock.now();
      engine.start();
      await driveUntil(clock, async () => (await quick.statuses())[0] === 'completed');
      expect(await slow.statuses()).to.deep.equal(['running']);
      await frozen.arrived(0);
      const quickRun = (await caller(tenant.key).sequences.runs({ id: quick.sequence.id })).runs[0]!;
      const slowRun = (await caller(tenant.key).sequences.runs({ id: slow.sequence.id })).runs[0]!;
      const quickEnd = (await caller(tenant.key).sequences.run({ id: quick.sequence.id, runId: quickRun.id })).run.executions[0]!.finishedAt;

      // Five seconds later (the engine's clock), the frozen receiver answers.
      clock.advance(5_000);
      const answeredAt = clock.now();
      frozen.release(0, 204);
      await driveUntil(clock, async () => (await slow.statuses())[0] === 'completed');
      const slowExecution = (await caller(tenant.key).sequences.run({ id: slow.sequence.id, runId: slowRun.id })).run.executions[0]!;
      expect(Date.parse(quickEnd!) - start).to.be.below(5_000);
      expect(Date.parse(slowExecution.finishedAt!)).to.equal(answeredAt);
      expect(Date.parse(slowExecution.startedAt)).to.be.below(answeredAt);
    } finally {
      await engine.stop(50);
      await frozen.close();
      await fast.close();
    }
  });

  it('a graceful stop during attempt 6 fails nothing: no attempt used, no run.step_failed; the next engine sends it again with the same id', async () => {
    let answers = [503, 503, 503, 503, 503];
    const receiver = await heldReceiver((index) => (index < 5 ? answers[index]! : index === 5 ? 'hold' : 204));
    const tenant = await buildTenant();
    const { sequence } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 1);
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const first = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true, random: () => 0.5 } });
    for (let attempt = 0; attempt < 5; attempt += 1) {
      await first.engine.runOnce();
      first.advance(2 * 3_600_000);
    }
    expect(receiver.received).to.have.length(5);
    // Attempt 6 goes out, and the worker is stopped while it waits for the answer.
    first.engine.start();
    await receiver.arrived(5);
    await first.engine.stop(50);

    const stopped = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
    expect(stopped.status).to.equal('running');
    expect(stopped.executions.map((e) => e.status)).to.deep.equal(['failed', 'failed', 'failed', 'failed', 'failed']);
    expect(await failedEvents(tenant.accountId)).to.have.length(5);
    expect((await sendRows(run!.id)).map((row) => [row.status, Number(row.attempt)])).to.deep.equal([['queued', 5]]);

    const next = engineAt(first.now(), { webhook: { timeoutMs: 600_000, allowInsecure: true } });
    await next.engine.runUntilIdle();
    const detail = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((e) => [e.attempt, e.status])).to.deep.equal([[1, 'failed'], [2, 'failed'], [3, 'failed'], [4, 'failed'], [5, 'failed'], [6, 'succeeded']]);
    expect(new Set(receiver.ids())).to.have.length(1);
    expect(receiver.received).to.have.length(7);
    answers = [];
    await receiver.close();
  });

  it('a pause during a request lets it finish; a resume meanwhile sends nothing: one request on the wire at a time, retried with the same id', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 'hold' : 204));
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 1);
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true, random: () => 0.5 } });
    try {
      engine.start();
      await receiver.arrived(0);
      await caller(tenant.key).sequences.pauseRun({ id: sequence.id, runId: run!.id });
      await caller(tenant.key).sequences.resumeRun({ id: sequence.id, runId: run!.id });
      // The resumed run is due: passes go by, and the request under way is not sent again.
      await driveUntil(clock, async () => false, 5).catch(() => undefined);
      expect(receiver.received).to.have.length(1);

      receiver.release(0, 503);
      await driveUntil(clock, async () => (await statuses())[0] === 'completed');
      expect(receiver.received).to.have.length(2);
      expect(receiver.ids()[1]).to.equal(receiver.ids()[0]);
      expect(receiver.received[1]!.at).to.be.at.least(receiver.answeredAt.get(0)!);
      const detail = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
      expect(detail.executions.map((e) => [e.attempt, e.status])).to.deep.equal([[1, 'failed'], [2, 'succeeded']]);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it('a paused run sends nothing: a failed attempt answered after the pause waits for the resume, then goes with the same id', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 'hold' : 204));
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 1);
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true, random: () => 0.5 } });
    try {
      engine.start();
      await receiver.arrived(0);
      await caller(tenant.key).sequences.pauseRun({ id: sequence.id, runId: run!.id });
      receiver.release(0, 503);
      // Well past the retry's time (5 s): the run is paused, nothing goes out.
      await driveUntil(clock, async () => clock.now() > Date.now() + 60_000, 100);
      expect(receiver.received).to.have.length(1);
      expect((await sendRows(run!.id)).map((row) => row.status)).to.deep.equal(['held']);
      expect(await statuses()).to.deep.equal(['paused']);

      await caller(tenant.key).sequences.resumeRun({ id: sequence.id, runId: run!.id });
      await driveUntil(clock, async () => (await statuses())[0] === 'completed');
      expect(receiver.ids()).to.deep.equal([receiver.ids()[0], receiver.ids()[0]]);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it('moveRuns during a request keeps the send: the retry has the same id, and the run goes on in the new version', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 'hold' : 204));
    const tenant = await buildTenant();
    const endpointId = await endpoint(tenant.accountId, receiver.url);
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Move',
      status: 'active',
      steps: [{ id: 'hook', type: 'webhook', endpointId, payload: { n: 1 } }, { id: 'old', type: 'tag', add: ['v1'] }],
    });
    const contact = await buildContact(tenant.accountId);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true, random: () => 0.5 } });
    const timeline = async () => (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
    try {
      engine.start();
      await receiver.arrived(0);
      const changed = await caller(tenant.key).sequences.update({
        id: sequence.id,
        steps: [{ id: 'hook', type: 'webhook', endpointId, payload: { n: 1 } }, { id: 'new', type: 'tag', add: ['v2'] }],
        moveRuns: { stepMap: {} },
      });
      expect(changed.sequence.version).to.equal(2);
      await driveUntil(clock, async () => false, 5).catch(() => undefined);
      expect(receiver.received).to.have.length(1);
      receiver.release(0, 503);
      await driveUntil(clock, async () => (await timeline()).status === 'completed');
      expect(receiver.ids()).to.deep.equal([receiver.ids()[0], receiver.ids()[0]]);
      expect((await timeline()).version).to.equal(2);
      expect((await getContact(testDb(), { accountId: tenant.accountId, id: contact.id })).tags).to.deep.equal(['v2']);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it('an unenroll answered while a send waits for its turn: the send is cancelled, and nothing reaches the receiver after it', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 'hold' : 204));
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 3);
    const runs = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    // One request at a time to this endpoint: two sends wait for the first one's answer.
    const { engine, clock } = engineAt(Date.now() + 1_000, { webhook: { timeoutMs: 600_000, allowInsecure: true }, outbound: { perTarget: 1 } });
    try {
      engine.start();
      await receiver.arrived(0);
      const first = JSON.parse(receiver.received[0]!.body) as { data: { run: { id: string } } };
      const waiting = runs.filter((run) => run.id !== first.data.run.id);
      const unenrolled = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: waiting[1]!.id })).run;
      await caller(tenant.key).sequences.unenroll({ id: sequence.id, contactIds: [unenrolled.contactId] });
      receiver.release(0, 204);
      await driveUntil(clock, async () => (await statuses()).filter((status) => status === 'completed').length === 2);
      await driveUntil(clock, async () => false, 5).catch(() => undefined);
      expect(receiver.received).to.have.length(2);
      expect(receiver.received.map((request) => (JSON.parse(request.body) as { data: { run: { id: string } } }).data.run.id)).to.not.include(unenrolled.id);
      expect((await sendRows(unenrolled.id)).map((row) => row.status)).to.deep.equal(['cancelled']);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it('a pause answered while its send waits for its turn: nothing of that run reaches the receiver until it is resumed', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 'hold' : 204));
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 3);
    const runs = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, clock } = engineAt(Date.now() + 1_000, { webhook: { timeoutMs: 600_000, allowInsecure: true }, outbound: { perTarget: 1 } });
    const runIdOf = (index: number) => (JSON.parse(receiver.received[index]!.body) as { data: { run: { id: string } } }).data.run.id;
    try {
      engine.start();
      await receiver.arrived(0);
      const paused = runs.filter((run) => run.id !== runIdOf(0))[1]!;
      await caller(tenant.key).sequences.pauseRun({ id: sequence.id, runId: paused.id });
      receiver.release(0, 204);
      await driveUntil(clock, async () => (await statuses()).filter((status) => status === 'completed').length === 2);
      await driveUntil(clock, async () => false, 5).catch(() => undefined);
      expect(receiver.received.map((_, index) => runIdOf(index))).to.not.include(paused.id);
      expect((await sendRows(paused.id)).map((row) => row.status)).to.deep.equal(['held']);

      await caller(tenant.key).sequences.resumeRun({ id: sequence.id, runId: paused.id });
      await driveUntil(clock, async () => (await statuses()).every((status) => status === 'completed'));
      expect(runIdOf(2)).to.equal(paused.id);
      expect(new Set(receiver.ids())).to.have.length(3);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it("an answer that comes after the run was unenrolled is kept in the timeline as skipped, and the run stays cancelled", async () => {
    const receiver = await heldReceiver(() => 'hold');
    const tenant = await buildTenant();
    const { sequence } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 1);
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, clock } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true } });
    try {
      engine.start();
      await receiver.arrived(0);
      const contactId = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run.contactId;
      await caller(tenant.key).sequences.unenroll({ id: sequence.id, contactIds: [contactId] });
      receiver.release(0, 204);
      const timeline = async () => (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
      await driveUntil(clock, async () => (await timeline()).executions.length > 0);
      const detail = await timeline();
      expect(detail).to.include({ status: 'cancelled', reason: 'unenrolled' });
      expect(detail.executions.map((e) => [e.status, e.reason])).to.deep.equal([['skipped', 'the run was cancelled when the receiver answered: succeeded']]);
      expect((await sendRows(run!.id)).map((row) => row.status)).to.deep.equal(['succeeded']);
    } finally {
      await engine.stop(50);
      await receiver.close();
    }
  });

  it('a sequence paused with a retry waiting sends nothing; set active again, the retry goes with the same id', async () => {
    const receiver = await heldReceiver((index) => (index === 0 ? 503 : 204));
    const tenant = await buildTenant();
    const { sequence, statuses } = await webhookRuns(tenant, await endpoint(tenant.accountId, receiver.url), 1);
    const { engine, advance } = engineAt(Date.now() + 1, { webhook: { timeoutMs: 600_000, allowInsecure: true } });
    await engine.runOnce();
    await caller(tenant.key).sequences.update({ id: sequence.id, status: 'paused' });
    advance(3_600_000);
    await engine.runUntilIdle();
    expect(receiver.received).to.have.length(1);
    await caller(tenant.key).sequences.update({ id: sequence.id, status: 'active' });
    // The re-activation's release, as the process's maintenance task carries it out.
    await releaseRecorded();
    advance(1_000);
    await engine.runUntilIdle();
    expect(await statuses()).to.deep.equal(['completed']);
    expect(receiver.ids()).to.deep.equal([receiver.ids()[0], receiver.ids()[0]]);
    await receiver.close();
  });

  it('the webhook-id counts visits per step: _1 the first time the run takes the step, _2 when a branch brings it back', async () => {
    const receiver = await heldReceiver(() => 204);
    const tenant = await buildTenant();
    const endpointId = await endpoint(tenant.accountId, receiver.url);
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Loop',
      status: 'active',
      steps: [
        { id: 'first', type: 'tag', add: ['a'] },
        { id: 'hook', type: 'webhook', endpointId },
        { id: 'again', type: 'branch', if: { tag: 'looped' }, then: 'end', else: 'mark' },
        { id: 'mark', type: 'tag', add: ['looped'] },
        { id: 'pause', type: 'wait', duration: 'PT1S' },
        { id: 'back', type: 'branch', if: { tag: 'looped' }, then: 'hook', else: 'end' },
        { id: 'end', type: 'exit' },
      ],
    });
    const contact = await buildContact(tenant.accountId);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    const { engine, advance } = engineAt();
    await engine.runUntilIdle();
    advance(2_000);
    await engine.runUntilIdle();
    expect((await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run.status).to.equal('completed');
    expect(receiver.ids()).to.deep.equal([`run_${run!.id}_hook_1`, `run_${run!.id}_hook_2`]);
    const bodies = receiver.received.map((request) => (JSON.parse(request.body) as { id: string }).id);
    expect(bodies).to.deep.equal(receiver.ids());
    await receiver.close();
  });

  it('an endpoint that no longer exists fails the step at once, with one attempt', async () => {
    const receiver = await heldReceiver(() => 204);
    const tenant = await buildTenant();
    const endpointId = await endpoint(tenant.accountId, receiver.url);
    const { sequence, statuses } = await webhookRuns(tenant, endpointId, 1);
    await select(testDb(), 'DELETE FROM webhook_endpoints WHERE id = ?', [endpointId]);
    const { engine } = engineAt();
    await engine.runUntilIdle();
    expect(await statuses()).to.deep.equal(['failed']);
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    expect(run!.reason).to.equal(`step "hook": webhook endpoint ${endpointId} no longer exists`);
    expect((await failedEvents(tenant.accountId)).map((event) => event.retryAt)).to.deep.equal([null]);
    expect(receiver.received).to.have.length(0);
    await receiver.close();
  });
});
