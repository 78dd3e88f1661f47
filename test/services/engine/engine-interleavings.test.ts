import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { deleteContact } from '../../../src/services/contacts/contact-operations';
import { getContact } from '../../../src/services/contacts/find-contact';
import { planRun } from '../../../src/services/engine/plan-run';
import type { RunResult } from '../../../src/services/engine/claimed-run';
import { recordBatch } from '../../../src/services/engine/record-batch';
import { claimDueRuns, loadClaimedRuns } from '../../../src/services/engine/run-queue';
import { listEvents } from '../../../src/services/events/list-events';
import { readVersions, versionKey } from '../../../src/services/runs/sequence-versions';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { engineAt, enrolledRun } from './support';

// Another writer of runs (pause, unenroll, a contact's deletion, moveRuns) acting between an
// engine's claim and its record: the record writes nothing for that run, and the run carries on
// from what the other writer left (docs/sequences.md "Exactly once").

// The first half of an engine pass: claims what is due at `now` and decides what each run does.
async function claimAndPlan(now: Date): Promise<RunResult[]> {
  const db = testDb();
  const claim = await claimDueRuns(db, now, { limit: 10, leaseMs: 60_000 });
  const runs = await loadClaimedRuns(db, claim);
  const versions = await readVersions(db, runs.map((run) => ({ sequenceId: run.sequenceId, version: run.version })));
  return runs.map((run) => planRun(run, versions.get(versionKey(run.sequenceId, run.version)), now) as RunResult);
}

async function moves(accountId: string): Promise<string[]> {
  return (await listEvents(testDb(), { accountId, limit: 100 })).events
    .filter((event) => event.type === 'run.status_changed')
    .map((event) => `${(event.data as { from: string }).from}->${(event.data as { to: string }).to}`);
}

describe('sequence engine: other writers between the claim and the record', () => {
  it('a run paused while the engine holds it: its tag step is not recorded, and after resume it happens once', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['marked'] }]);
    const planned = await claimAndPlan(new Date(Date.now() + 1));
    expect(planned.map((result) => result.kind)).to.deep.equal(['step']);
    await caller(run.key).sequences.pauseRun({ id: run.sequence.id, runId: run.runId });
    await recordBatch(testDb(), planned, new Date());
    expect(await run.timeline()).to.include({ status: 'paused', currentStepId: 'mark' });
    expect((await run.timeline()).executions).to.deep.equal([]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal([]);

    expect((await caller(run.key).sequences.resumeRun({ id: run.sequence.id, runId: run.runId })).run.status).to.equal('pending');
    const { engine } = engineAt(Date.now() + 1_000);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((e) => [e.stepId, e.status, e.attempt])).to.deep.equal([['mark', 'succeeded', 1]]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['marked']);
    expect(await moves(run.accountId)).to.deep.equal(['pending->paused', 'paused->pending', 'pending->completed']);
  });

  it('a run unenrolled while the engine holds the end of its wait: cancelled, the wait skipped, the next step never taken', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT1M' }, { id: 'mark', type: 'tag', add: ['marked'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    const planned = await claimAndPlan(new Date(Date.now() + 61_000));
    expect(planned.map((result) => result.kind)).to.deep.equal(['step']);
    const { cancelled } = await caller(run.key).sequences.unenroll({ id: run.sequence.id, contactIds: [run.contact.id] });
    expect(cancelled).to.equal(1);
    await recordBatch(testDb(), planned, new Date(Date.now() + 61_000));
    advance(120_000);
    expect(await engine.runUntilIdle()).to.equal(0);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', reason: 'unenrolled', currentStepId: 'w' });
    expect(detail.executions.map((e) => [e.stepId, e.status, e.reason])).to.deep.equal([['w', 'skipped', 'run cancelled: unenrolled']]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal([]);
    expect(await moves(run.accountId)).to.deep.equal(['pending->running', 'running->cancelled']);
  });

  it('a contact deleted while the engine holds its run at a tag step: nothing is written, the contact stays deleted', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['marked'] }]);
    const planned = await claimAndPlan(new Date(Date.now() + 1));
    await deleteContact(testDb(), { accountId: run.accountId, id: run.contact.id });
    await recordBatch(testDb(), planned, new Date());
    const [contacts] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM contacts WHERE id = ?', [run.contact.id]);
    expect(Number(contacts!.n)).to.equal(0);
    const [executions] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM run_step_executions WHERE run_id = ?', [run.runId]);
    expect(Number(executions!.n)).to.equal(0);
    expect((await listEvents(testDb(), { accountId: run.accountId, limit: 100 })).events.map((event) => event.type)).to.not.include('contact.updated');
  });

  it('runs moved to a new version while the engine holds the end of their wait: they start the new step, the old one is not taken', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT1M' }, { id: 'old', type: 'tag', add: ['old'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    const planned = await claimAndPlan(new Date(Date.now() + 61_000));
    await caller(run.key).sequences.update({
      id: run.sequence.id,
      // A changed wait (the same one would keep its end: engine-rules.test.ts).
      steps: [{ id: 'w2', type: 'wait', duration: 'PT2M' }, { id: 'new', type: 'tag', add: ['new'] }],
      moveRuns: { stepMap: { w: 'w2' } },
    });
    await recordBatch(testDb(), planned, new Date(Date.now() + 61_000));
    expect(await run.timeline()).to.include({ version: 2, currentStepId: 'w2' });
    advance(61_000);
    await engine.runUntilIdle();
    advance(121_000);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['w', 'skipped'],
      ['w2', 'succeeded'],
      ['new', 'succeeded'],
    ]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['new']);
  });
});
