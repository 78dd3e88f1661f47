import { expect } from 'chai';
import { Transaction } from 'sequelize';
import { addTags } from '../../../src/services/contacts/contact-operations';
import { execute, select } from '../../../src/db/sql/statements';
import { planRun } from '../../../src/services/engine/plan-run';
import type { RunResult } from '../../../src/services/engine/claimed-run';
import { recordBatch } from '../../../src/services/engine/record-batch';
import { claimDueRuns, loadClaimedRuns } from '../../../src/services/engine/run-queue';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { startReceiver } from '../../support/webhook-receiver';
import { readVersions, versionKey } from '../../../src/services/runs/sequence-versions';
import { listEvents } from '../../../src/services/events/list-events';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { dispatchAndDie, engineAt, enrolledRun, releaseRecorded } from './support';

// Races and edge cases of the engine against the other writers of runs (docs/sequences.md).

async function runRow(runId: string) {
  const [row] = await select<{ status: string; due_at: unknown; claim_token: string | null; current_step_id: string | null }>(
    testDb(),
    'SELECT status, due_at, claim_token, current_step_id FROM sequence_runs WHERE id = ?',
    [runId],
  );
  return row!;
}

// Races and edge cases found in review: each failed before its fix.
describe('sequence engine: races and edge cases', () => {
  it('a sequence set active again while the engine is setting its due run aside: the run still carries on', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    await caller(run.key).sequences.update({ id: run.sequence.id, status: 'paused' });
    const db = testDb();
    const now = new Date(Date.now() + 1);
    // One engine pass, cut in two by the sequence's re-activation: claimed and planned while
    // the sequence is paused, recorded after it is active again.
    const claim = await claimDueRuns(db, now, { limit: 10, leaseMs: 60_000 });
    const runs = await loadClaimedRuns(db, claim);
    const versions = await readVersions(db, runs.map((r) => ({ sequenceId: r.sequenceId, version: r.version })));
    const planned = runs.map((r) => planRun(r, versions.get(versionKey(r.sequenceId, r.version)), now)) as RunResult[];
    expect(planned.map((p) => p.kind)).to.deep.equal(['park']);
    await caller(run.key).sequences.update({ id: run.sequence.id, status: 'active' });
    await recordBatch(db, planned, now);

    const { engine, advance } = engineAt();
    advance(61_000);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status, `due_at=${String((await runRow(run.runId)).due_at)}`).to.equal('completed');
  });

  it("another sequence's tag step, in the same engine pass, cancels the run its exit rule now stops", async () => {
    const { key, accountId } = await buildTenant();
    const tagging = (await caller(key).sequences.create({ name: 'Buy', status: 'active', steps: [{ id: 'buy', type: 'tag', add: ['purchased'] }] })).sequence;
    const nurture = (
      await caller(key).sequences.create({
        name: 'Nurture',
        status: 'active',
        steps: [{ id: 'later', type: 'wait', duration: 'P3D' }, { id: 'pitch', type: 'tag', add: ['pitched'] }],
        exitWhen: [{ tag: 'purchased' }],
      })
    ).sequence;
    const contact = await buildContact(accountId);
    await caller(key).sequences.enroll({ id: tagging.id, contactIds: [contact.id] });
    await caller(key).sequences.enroll({ id: nurture.id, contactIds: [contact.id] });
    const { engine } = engineAt();
    // Both runs are due: one pass takes them together.
    expect(await engine.runOnce()).to.equal(2);
    const [run] = (await caller(key).sequences.runs({ id: nurture.id })).runs;
    const detail = (await caller(key).sequences.run({ id: nurture.id, runId: run!.id })).run;
    expect(detail).to.include({ status: 'cancelled', reason: 'exitWhen: the contact got the tag "purchased"' });
  });

  it('moveRuns places a run at a step named like an Object property ("constructor") on the new step of that id', async () => {
    const run = await enrolledRun([{ id: 'constructor', type: 'wait', duration: 'P1D' }, { id: 'done', type: 'exit' }]);
    const { engine } = engineAt();
    await engine.runOnce();
    const changed = await caller(run.key).sequences.update({
      id: run.sequence.id,
      steps: [{ id: 'constructor', type: 'wait', duration: 'P2D' }, { id: 'done', type: 'exit' }],
      moveRuns: { stepMap: {} },
    });
    expect(changed.sequence.version).to.equal(2);
    expect(await run.timeline()).to.include({ version: 2, currentStepId: 'constructor', status: 'running' });
  });
  it('an exit rule that cancels a run the engine is recording: the new wait ends with the run, and the event says where the run was', async function () {
    const db = testDb();
    // One writer at a time on SQLite: the two transactions cannot overlap there.
    if (db.dialect === 'sqlite') this.skip();
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'P1D' }, { id: 'mark', type: 'tag', add: ['x'] }], { exitWhen: [{ tag: 'purchased' }] });
    // A statement of this database's connections that has been waiting over 200 ms (blocked on a
    // lock), whose text matches (the processlist shows one's own connections without the
    // PROCESS privilege).
    const blockedIn = async (pattern: string, except = '') => {
      for (let i = 0; i < 5_000; i += 1) {
        const [row] = await select<{ n: number | string }>(
          db,
          "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND TIME_MS > 200 AND INFO LIKE ? AND INFO NOT LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'",
          [pattern, except],
        );
        if (Number(row!.n) > 0) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect.fail(`nothing blocked in ${pattern}`);
    };
    // Holds the end of the run log (a gap lock, so REPEATABLE READ): the engine's record stops at
    // its last statement, the log row with its events, with the run locked and its wait written.
    // The contact write then reads the run (as it was before the engine's record) and waits for it.
    const hold = await db.sequelize.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ });
    await select(db, 'SELECT seq FROM run_log WHERE seq >= 0 FOR UPDATE', [], hold);
    const { engine } = engineAt();
    let pass: Promise<number> | undefined;
    let tagging: Promise<unknown> | undefined;
    try {
      pass = engine.runOnce();
      await blockedIn('INSERT INTO run_log%');
      tagging = addTags(db, { accountId: run.accountId, id: run.contact.id, tags: ['purchased'] });
      // The contact write, waiting for the engine's run (whichever statement it waits in).
      await blockedIn('%', 'INSERT INTO run_log%');
    } finally {
      await hold.commit();
    }
    await pass;
    await tagging;

    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled' });
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([['w', 'skipped']]);
    const moves = (await listEvents(db, { accountId: run.accountId, limit: 100 })).events
      .filter((event) => event.type === 'run.status_changed')
      .map((event) => `${(event.data as { from: string }).from}->${(event.data as { to: string }).to}`);
    expect(moves).to.deep.equal(['pending->running', 'running->cancelled']);
  });
  it('an attempt interrupted by a dead worker is a failed attempt: it has its run.step_failed event', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const tenant = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Hook', status: 'active', steps: [{ id: 'hook', type: 'webhook', endpointId: webhook.id }] });
      const contact = await buildContact(tenant.accountId);
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const start = Date.now() + 1;
      // A worker that begins the step, claims its send, and dies before its request's answer
      // is recorded.
      const claim = await claimDueRuns(testDb(), new Date(start), { limit: 10, leaseMs: 60_000 });
      const runs = await loadClaimedRuns(testDb(), claim);
      const versions = await readVersions(testDb(), runs.map((r) => ({ sequenceId: r.sequenceId, version: r.version })));
      await recordBatch(testDb(), runs.map((r) => planRun(r, versions.get(versionKey(r.sequenceId, r.version)), new Date(start))), new Date(start));
      await dispatchAndDie(new Date(start), { send: false });
      const { engine, advance } = engineAt(start);
      advance(60_001);
      await engine.runUntilIdle();
      const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
      const detail = (await caller(tenant.key).sequences.run({ id: sequence.id, runId: run!.id })).run;
      expect(detail.executions.map((e) => [e.attempt, e.status])).to.deep.equal([[1, 'failed'], [2, 'succeeded']]);
      const failures = (await listEvents(testDb(), { accountId: tenant.accountId, limit: 100 })).events.filter((event) => event.type === 'run.step_failed');
      expect(failures.map((event) => (event.data as { execution: { attempt: number; reason: string } }).execution)).to.have.length(1);
      expect((failures[0]!.data as { execution: { reason: string } }).execution.reason).to.match(/^interrupted/);
    } finally {
      await receiver.close();
    }
  });
  it('a receiver that hangs holds up no other run: with every webhook slot taken, a due tag step still runs', async () => {
    const receiver = await startReceiver(() => 'hang');
    const tenant = await buildTenant();
    const { webhook } = await createWebhook(testDb(), { accountId: tenant.accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
    const hook = (await caller(tenant.key).sequences.create({ name: 'Hook', status: 'active', steps: [{ id: 'hook', type: 'webhook', endpointId: webhook.id }] })).sequence;
    const mark = (await caller(tenant.key).sequences.create({ name: 'Mark', status: 'active', steps: [{ id: 'mark', type: 'tag', add: ['marked'] }] })).sequence;
    const [a, b] = [await buildContact(tenant.accountId), await buildContact(tenant.accountId)];
    await caller(tenant.key).sequences.enroll({ id: hook.id, contactIds: [a.id] });
    await caller(tenant.key).sequences.enroll({ id: mark.id, contactIds: [b.id] });
    const [markRun] = (await caller(tenant.key).sequences.runs({ id: mark.id })).runs;
    const [hookRun] = (await caller(tenant.key).sequences.runs({ id: hook.id })).runs;
    const [{ due_at: hookDue }] = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [hookRun!.id]);
    // The webhook run first in due order.
    await execute(testDb(), 'UPDATE sequence_runs SET due_at = ? WHERE id = ?', [new Date(new Date(hookDue as string | Date).getTime() + 1), markRun!.id]);

    const { engine, clock } = engineAt(Date.now() + 10, { webhook: { timeoutMs: 30_000, allowInsecure: true }, outbound: { maxInFlight: 1 } });
    engine.start();
    try {
      await clock.nextWait();
      for (let i = 0; i < 1_000 && receiver.received.length === 0; i += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(receiver.received).to.have.length(1);
      const waits: number[] = [];
      for (let pass = 0; pass < 5; pass += 1) {
        waits.push(await clock.nextWait());
        clock.fire();
      }
      const detail = (await caller(tenant.key).sequences.run({ id: mark.id, runId: markRun!.id })).run;
      expect(detail.status, `the engine's waits meanwhile: ${waits.join(', ')} ms`).to.equal('completed');
    } finally {
      await receiver.close();
      await engine.stop(1_000);
    }
  });
  it('a sending window removed: a run held for its next opening carries on at once', async () => {
    const day = 86_400_000;
    // Tomorrow 12:00Z: outside a 09:00-10:00 UTC window.
    const noon = Math.floor(Date.now() / day) * day + day + 12 * 3_600_000;
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['marked'] }], { sendingWindow: { timeZone: 'UTC', from: '09:00', to: '10:00' } });
    const { engine, advance } = engineAt(noon);
    expect(await engine.runOnce()).to.equal(1);
    expect(await run.timeline()).to.include({ status: 'pending' });
    await caller(run.key).sequences.update({ id: run.sequence.id, sendingWindow: null });
    expect(await releaseRecorded()).to.equal(1);
    advance(1_000);
    await engine.runUntilIdle();
    expect(await run.timeline()).to.include({ status: 'completed' });
  });
  it('a change refused by its moveRuns leaves no trace: the next change\'s steps are the ones used', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'P1D' }, { id: 'a', type: 'tag', add: ['a'] }]);
    // Refused: the run is at "w", which the map does not place and the new steps do not have.
    let refused: unknown;
    try {
      await caller(run.key).sequences.update({
        id: run.sequence.id,
        steps: [{ id: 'x', type: 'wait', duration: 'P1D' }, { id: 'b', type: 'tag', add: ['b'] }],
        moveRuns: { stepMap: {} },
      });
    } catch (error) {
      refused = error;
    }
    expect((refused as { code?: string } | undefined)?.code).to.equal('BAD_REQUEST');
    const changed = await caller(run.key).sequences.update({ id: run.sequence.id, steps: [{ id: 'c', type: 'tag', add: ['c'] }] });
    expect(changed.sequence.version).to.equal(2);
    expect(changed.sequence.steps.map((step) => step.id)).to.deep.equal(['c']);
    const other = await buildContact(run.accountId);
    await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: [other.id] });
    const runs = (await caller(run.key).sequences.runs({ id: run.sequence.id })).runs;
    expect(runs.find((r) => r.id !== run.runId)).to.include({ version: 2, currentStepId: 'c' });
  });
});
