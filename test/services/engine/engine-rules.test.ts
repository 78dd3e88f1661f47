import { expect } from 'chai';
import { addTags, deleteContact, updateSubscriptions } from '../../../src/services/contacts/contact-operations';
import { getContact } from '../../../src/services/contacts/find-contact';
import { listEvents } from '../../../src/services/events/list-events';
import { toDate } from '../../../src/db/sql/rows';
import { select } from '../../../src/db/sql/statements';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact } from '../../support/factories';
import { engineAt, enrolledRun, releaseRecorded } from './support';

// What decides where a run goes: branches, exit rules, the sending window, pauses, versions
// (docs/sequences.md).

const HOUR = 3_600_000;

describe('sequence engine: rules', () => {
  it('branches on the contact and records the way it went', async () => {
    const steps = [
      { id: 'check', type: 'branch', if: { field: 'plan', equals: 'pro' }, then: 'pro', else: 'basic' },
      { id: 'basic', type: 'tag', add: ['basic'] },
      { id: 'end', type: 'exit' },
      { id: 'pro', type: 'update', customFields: { onboarding: { stage: 'pro' } } },
    ] as const;
    const pro = await enrolledRun([...steps], {}, { customFields: { plan: 'pro', onboarding: { started: true } } });
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const detail = await pro.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['check', 'succeeded'],
      ['pro', 'succeeded'],
    ]);
    expect(detail.executions[0]!.detail).to.deep.equal({ took: 'then', to: 'pro' });
    const contact = await getContact(testDb(), { accountId: pro.accountId, id: pro.contact.id });
    expect(contact.customFields).to.deep.equal({ plan: 'pro', onboarding: { started: true, stage: 'pro' } });
    expect(contact.tags).to.deep.equal([]);
  });

  it('cancels a run when the contact gets an exit tag, with the reason, and its wait is recorded skipped', async () => {
    const run = await enrolledRun([{ id: 'long', type: 'wait', duration: 'P3D' }, { id: 'mark', type: 'tag', add: ['x'] }], {
      exitWhen: [{ tag: 'purchased' }],
    });
    const { engine } = engineAt();
    await engine.runOnce();
    await addTags(testDb(), { accountId: run.accountId, id: run.contact.id, tags: ['purchased'] });
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', reason: 'exitWhen: the contact got the tag "purchased"' });
    expect(detail.executions.map((e) => e.status)).to.deep.equal(['skipped']);
    const stored = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [run.runId]);
    expect(stored[0]!.due_at).to.equal(null);
    const events = await listEvents(testDb(), { accountId: run.accountId, type: 'run.status_changed', limit: 10 });
    expect(events.events.at(-1)!.data).to.deep.include({ from: 'running', to: 'cancelled' });
  });

  it('cancels before the next step when the rule already holds (unsubscribed while the run was queued)', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }], { exitWhen: [{ unsubscribed: 'email' }] });
    // Written without the hook's help: the rule is met by a contact that was unsubscribed in bulk.
    await select(testDb(), "UPDATE contacts SET email_subscription_status = 'unsubscribed' WHERE id = ?", [run.contact.id]);
    const { engine } = engineAt();
    await engine.runOnce();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', reason: 'exitWhen: the contact unsubscribed from email' });
    expect(detail.executions).to.deep.equal([]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal([]);
  });

  it('an unsubscribe through the API cancels the run at once', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT1H' }], { exitWhen: [{ unsubscribed: 'whatsapp' }] });
    await updateSubscriptions(testDb(), { accountId: run.accountId, id: run.contact.id, whatsappSubscriptionStatus: 'unsubscribed' });
    expect((await run.timeline()).status).to.equal('cancelled');
  });

  it('a deleted contact takes its runs with it, and the engine finds nothing to do', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    await deleteContact(testDb(), { accountId: run.accountId, id: run.contact.id });
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(0);
  });

  it('holds a step that acts until the sending window opens, in the contact\'s own zone across a DST change', async () => {
    // 2027-03-28 is the spring-forward day in Europe/Paris: 09:00 local is 07:00Z that day, 08:00Z the day before.
    const start = Date.parse('2027-03-27T20:00:00.000Z');
    const run = await enrolledRun(
      [{ id: 'mark', type: 'tag', add: ['morning'] }],
      { sendingWindow: { timeZone: 'UTC', useContactTimeZone: true, from: '09:00', to: '17:00' } },
      { customFields: { timeZone: 'Europe/Paris' } },
    );
    const { engine, advance } = engineAt(start);
    await engine.runOnce();
    const stored = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [run.runId]);
    expect(toDate(stored[0]!.due_at).toISOString()).to.equal('2027-03-28T07:00:00.000Z');
    expect((await run.timeline()).executions).to.deep.equal([]);
    advance(Date.parse('2027-03-28T07:00:00.000Z') - start - 1);
    expect(await engine.runOnce()).to.equal(0);
    advance(1);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions[0]!.startedAt).to.equal('2027-03-28T07:00:00.000Z');
  });

  it('a paused sequence sets its due runs aside; set active again, they carry on', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    await caller(run.key).sequences.update({ id: run.sequence.id, status: 'paused' });
    const { engine, advance } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    expect(await engine.runOnce()).to.equal(0);
    expect((await run.timeline()).status).to.equal('pending');
    await caller(run.key).sequences.update({ id: run.sequence.id, status: 'active' });
    // Released by the maintenance task, stamped with the change's (real) time: the engine's
    // clock must have reached it.
    expect(await releaseRecorded()).to.equal(1);
    advance(1_000);
    await engine.runUntilIdle();
    expect((await run.timeline()).status).to.equal('completed');
  });

  it('a paused run stops acting; resumed, its wait keeps its end', async () => {
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT2H' }, { id: 'mark', type: 'tag', add: ['x'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    await caller(run.key).sequences.pauseRun({ id: run.sequence.id, runId: run.runId });
    advance(3 * HOUR);
    expect(await engine.runOnce()).to.equal(0);
    expect((await run.timeline()).status).to.equal('paused');
    const resumed = await caller(run.key).sequences.resumeRun({ id: run.sequence.id, runId: run.runId });
    expect(resumed.run.status).to.equal('running');
    // Resumed after the wait's end (by the API's clock the wait is still on: it ends at the
    // engine's hour 2, the engine's clock is at hour 3).
    advance(2 * HOUR);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['w', 'succeeded'],
      ['mark', 'succeeded'],
    ]);
  });

  it('runs keep their version when the steps change; moveRuns moves them to the mapped step', async () => {
    const run = await enrolledRun([{ id: 'a', type: 'wait', duration: 'P1D' }, { id: 'b', type: 'tag', add: ['old'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    const other = await buildContact(run.accountId);
    const changed = await caller(run.key).sequences.update({
      id: run.sequence.id,
      steps: [{ id: 'a2', type: 'wait', duration: 'PT1H' }, { id: 'b', type: 'tag', add: ['new'] }],
    });
    expect(changed.sequence.version).to.equal(2);
    await caller(run.key).sequences.enroll({ id: run.sequence.id, contactIds: [other.id] });
    expect((await run.timeline()).version).to.equal(1);
    await caller(run.key).sequences.update({ id: run.sequence.id, moveRuns: { stepMap: { a: 'a2' } } });
    const moved = await run.timeline();
    expect(moved).to.include({ version: 2, currentStepId: 'a2' });
    expect(moved.executions.map((e) => e.status)).to.deep.equal(['skipped']);
    advance(1_000);
    await engine.runOnce();
    advance(HOUR + 1);
    await engine.runUntilIdle();
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['new']);
  });

  it('a run moved to the same wait keeps its end and its execution; moved to a changed wait, it starts again', async () => {
    const run = await enrolledRun([{ id: 'a', type: 'wait', duration: 'P1D' }, { id: 'b', type: 'tag', add: ['old'] }]);
    const { engine, advance } = engineAt();
    await engine.runOnce();
    const dueAt = async () => toDate((await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [run.runId]))[0]!.due_at);
    const begunDue = await dueAt();
    // Version 2 changes only the tag; the wait, renamed, is the same wait.
    advance(12 * HOUR);
    await caller(run.key).sequences.update({
      id: run.sequence.id,
      steps: [{ id: 'a-renamed', type: 'wait', duration: 'P1D' }, { id: 'b', type: 'tag', add: ['new'] }],
      moveRuns: { stepMap: { a: 'a-renamed' } },
    });
    const moved = await run.timeline();
    expect(moved).to.include({ version: 2, currentStepId: 'a-renamed' });
    expect(moved.executions.map((e) => [e.stepId, e.status])).to.deep.equal([['a', 'running']]);
    expect((await dueAt()).toISOString()).to.equal(begunDue.toISOString());
    advance(12 * HOUR - 1_000);
    expect(await engine.runOnce()).to.equal(0);
    advance(2_000);
    await engine.runUntilIdle();
    const done = await run.timeline();
    expect(done.status).to.equal('completed');
    expect(done.executions.map((e) => [e.stepId, e.status])).to.deep.equal([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
    ]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['new']);

    // A changed wait (2 hours instead of 1 day) starts again from the move.
    const other = await enrolledRun([{ id: 'a', type: 'wait', duration: 'P1D' }, { id: 'b', type: 'tag', add: ['old'] }]);
    await engine.runUntilIdle();
    await caller(other.key).sequences.update({ id: other.sequence.id, steps: [{ id: 'a', type: 'wait', duration: 'PT2H' }, { id: 'b', type: 'tag', add: ['old'] }], moveRuns: { stepMap: {} } });
    const restarted = await other.timeline();
    expect(restarted.executions.map((e) => [e.stepId, e.status])).to.deep.equal([['a', 'skipped']]);
  });

  it('fails the run when a tag step would break the contact\'s limit, naming the step', async () => {
    const tags = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const run = await enrolledRun([{ id: 'more', type: 'tag', add: ['one-too-many'] }], {}, { tags });
    const { engine } = engineAt();
    await engine.runOnce();
    const detail = await run.timeline();
    expect(detail.status).to.equal('failed');
    expect(detail.currentStepId).to.equal('more');
    expect(detail.reason).to.match(/^step "more": .*at most 100 tags/);
    expect(detail.executions.map((e) => [e.stepId, e.status])).to.deep.equal([['more', 'failed']]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.have.length(100);
  });
});
