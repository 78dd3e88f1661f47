import { recordFeedback } from '../../../src/services/bounces/record-feedback';
import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { countRunProgress, utcDay } from '../../../src/services/analytics/progress-counters';
import { progressOfChange } from '../../../src/services/analytics/run-change-progress';
import { nextRunState } from '../../../src/services/runs/run-state';
import { markSent } from '../../../src/services/messages/message-store';
import { applyProviderStatuses } from '../../../src/services/messages/provider-statuses';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { messageFixture } from '../../support/messages';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt } from '../engine/support';

// The analytics counters (docs/analytics.md) as runs go through the engine, on the engine's
// clock, and as messages change status: what GET /sequences/{id}/stats answers.

type Stats = Awaited<ReturnType<ReturnType<typeof caller>['sequences']['stats']>>['stats'];

const stats = async (key: string, id: string, days?: number) => (await caller(key).sequences.stats({ id, ...(days ? { days } : {}) })).stats;
const step = (figures: Stats, stepId: string) => figures.steps.find((s) => s.stepId === stepId)!;
const total = (figures: Stats, pick: (day: Stats['days'][number]) => number) => figures.days.reduce((sum, day) => sum + pick(day), 0);
const exits = (figures: Stats) => {
  const sums: Record<string, number> = {};
  for (const day of figures.days) for (const [reason, n] of Object.entries(day.exits)) sums[reason] = (sums[reason] ?? 0) + n;
  return sums;
};

async function activeSequence(key: string, steps: unknown[], extra: Record<string, unknown> = {}) {
  return (await caller(key).sequences.create({ name: 'Stats', status: 'active', steps, ...extra } as never)).sequence;
}

describe('sequence stats: the counters the engine keeps', () => {
  it('counts each step reached and completed, the runs waiting at a step, enrollments and completions', async () => {
    const { key, accountId } = await buildTenant();
    const receiver = await startReceiver(() => 204);
    try {
      const { webhook } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const sequence = await activeSequence(key, [
        { id: 'pause', type: 'wait', duration: 'PT5S' },
        { id: 'notify', type: 'webhook', endpointId: webhook.id, payload: {} },
        { id: 'mark', type: 'tag', add: ['welcomed'] },
        { id: 'done', type: 'exit' },
      ]);
      const contacts = [await buildContact(accountId), await buildContact(accountId)];
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((c) => c.id) });

      let figures = await stats(key, sequence.id);
      expect(figures.steps.map((s) => [s.stepId, s.type, s.reached, s.waiting])).to.deep.equal([
        ['pause', 'wait', 2, 2],
        ['notify', 'webhook', 0, 0],
        ['mark', 'tag', 0, 0],
        ['done', 'exit', 0, 0],
      ]);
      expect(total(figures, (day) => day.enrollments)).to.equal(2);

      const { engine, advance, now } = engineAt();
      await engine.runOnce();
      // Both waits began: still at the wait, nothing completed yet.
      figures = await stats(key, sequence.id);
      expect(step(figures, 'pause')).to.include({ reached: 2, completed: 0, waiting: 2 });

      advance(5_001);
      await engine.runUntilIdle();
      advance(1_000);
      await engine.runUntilIdle();
      expect(receiver.received).to.have.length(2);
      const runs = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      expect(runs.map((run) => run.status)).to.deep.equal(['completed', 'completed']);

      figures = await stats(key, sequence.id);
      for (const id of ['pause', 'notify', 'mark', 'done']) {
        expect(step(figures, id), id).to.deep.include({ reached: 2, completed: 2, failed: 0, skipped: {}, waiting: 0 });
      }
      expect(total(figures, (day) => day.completions)).to.equal(2);
      expect(exits(figures)).to.deep.equal({});
      // The completions are on the engine's day.
      const today = figures.days.find((day) => day.date === utcDay(new Date(now())));
      expect(today?.completions).to.equal(2);
      expect(figures.days).to.have.length(30);
      expect(figures.to).to.equal(utcDay(new Date()));
    } finally {
      await receiver.close();
    }
  });

  it('counts skips and exits by reason: an exit rule, an unenroll, a deleted contact, and a step that failed', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await activeSequence(key, [
      { id: 'pause', type: 'wait', duration: 'PT5S' },
      { id: 'mark', type: 'tag', add: ['one-more'] },
    ], { exitWhen: [{ tag: 'stop' }] });
    const leaver = await buildContact(accountId);
    const stopper = await buildContact(accountId);
    const deleted = await buildContact(accountId);
    // 100 tags: the tag step's 101st is refused, and the step fails.
    const full = await buildContact(accountId, { tags: Array.from({ length: 100 }, (_, i) => `t${i}`) });
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [leaver.id, stopper.id, deleted.id, full.id] });
    const { engine, advance } = engineAt();
    await engine.runOnce();

    await caller(key).sequences.unenroll({ id: sequence.id, contactIds: [leaver.id] });
    await caller(key).contacts.addTags({ id: stopper.id, tags: ['stop'] });
    await caller(key).contacts.delete({ id: deleted.id });
    let figures = await stats(key, sequence.id);
    expect(step(figures, 'pause')).to.deep.include({ reached: 4, completed: 0, failed: 0, waiting: 1, skipped: { unenrolled: 1, exit_rule: 1, contact_deleted: 1 } });

    advance(5_001);
    await engine.runUntilIdle();
    figures = await stats(key, sequence.id);
    expect(step(figures, 'pause')).to.deep.include({ reached: 4, completed: 1, waiting: 0 });
    expect(step(figures, 'mark')).to.deep.include({ reached: 1, completed: 0, failed: 1, waiting: 0, skipped: {} });
    expect(exits(figures)).to.deep.equal({ unenrolled: 1, exit_rule: 1, contact_deleted: 1, step_failed: 1 });
    expect(total(figures, (day) => day.completions)).to.equal(0);
    expect(total(figures, (day) => day.enrollments)).to.equal(4);
  });

  it('counts pause and resume as nothing, and a run the runner cancels at its step as skipped there and an exit', async () => {
    const { key, accountId } = await buildTenant({ kind: 'runner' });
    const sequence = await activeSequence(key, [{ id: 'hold', type: 'wait', duration: 'P1D' }]);
    const contact = await buildContact(accountId);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
    await caller(key).sequences.pauseRun({ id: sequence.id, runId: run!.id });
    await caller(key).sequences.resumeRun({ id: sequence.id, runId: run!.id });
    expect(step(await stats(key, sequence.id), 'hold')).to.deep.include({ reached: 1, waiting: 1, skipped: {} });
    await caller(key).runs.transition({ runId: run!.id, status: 'cancelled' });
    const figures = await stats(key, sequence.id);
    expect(step(figures, 'hold')).to.deep.include({ reached: 1, waiting: 0, skipped: { cancelled: 1 } });
    expect(exits(figures)).to.deep.equal({ cancelled: 1 });
  });

  it('counts a run moved to a new version as reaching its new step, and the runs waiting there', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await activeSequence(key, [{ id: 'first', type: 'wait', duration: 'P1D' }]);
    const contact = await buildContact(accountId);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    await caller(key).sequences.update({ id: sequence.id, steps: [{ id: 'second', type: 'wait', duration: 'P1D' }], moveRuns: { stepMap: { first: 'second' } } } as never);
    const figures = await stats(key, sequence.id);
    expect(figures.steps.map((s) => [s.stepId, s.type, s.reached, s.waiting])).to.deep.equal([
      ['second', 'wait', 1, 1],
      ['first', 'wait', 1, 0],
    ]);
  });

  it('counts each status a message reaches once, even when the provider repeats it or reports it late', async () => {
    const fixture = await messageFixture();
    const { id } = await fixture.queue({ channel: 'whatsapp' });
    const db = testDb();
    const at = new Date();
    await withTransaction(db, (transaction) => markSent(db, [{ id, providerMessageId: 'wamid.1' }], { now: at }, transaction));
    const report = (status: 'delivered' | 'read' | 'sent') =>
      withTransaction(db, (transaction) => applyProviderStatuses(db, [{ channel: 'whatsapp', providerMessageId: 'wamid.1', status, at }], { now: at }, transaction));
    await report('delivered');
    await report('delivered');
    await report('read');
    await report('read');
    await report('sent');
    await report('delivered');

    const figures = await stats(fixture.key, fixture.sequence.id);
    const messages = figures.days.find((day) => day.date === utcDay(at))!.messages;
    expect(messages).to.deep.equal({ sent: 1, delivered: 1, read: 1, failed: 0, bounced: 0, complained: 0 });
  });

  it('counts a late bounce as bounced (not failed) and a complaint as complained, once each, on the day reported and at the step that sent it', async () => {
    const fixture = await messageFixture();
    const db = testDb();
    const at = new Date();
    const bounced = (await fixture.queue({ channel: 'email' })).id;
    const complained = (await fixture.queue({ channel: 'email' })).id;
    await withTransaction(db, (transaction) => markSent(db, [{ id: bounced, providerMessageId: null }, { id: complained, providerMessageId: null }], { now: at }, transaction));
    for (let i = 0; i < 2; i += 1) {
      await recordFeedback(db, [{ kind: 'hard_bounce', messageId: bounced, at, detail: '5.1.1' }, { kind: 'complaint', messageId: complained, at }], { now: at, source: 'dsn' });
    }
    const figures = await stats(fixture.key, fixture.sequence.id);
    expect(figures.days.find((day) => day.date === utcDay(at))!.messages).to.deep.equal({ sent: 2, delivered: 0, read: 0, failed: 0, bounced: 1, complained: 1 });
    // And by the step that sent them: messages, apart from the step's runs.
    expect(step(figures, 'pause')).to.deep.include({ bounced: 1, complained: 1 });
  });

  it('answers for a sequence never run: its steps at zero and its days empty, read from a handful of counter rows', async () => {
    const { key } = await buildTenant();
    const sequence = await activeSequence(key, [{ id: 'only', type: 'wait', duration: 'P1D' }]);
    const figures = await stats(key, sequence.id, 7);
    expect(figures.steps).to.deep.equal([{ stepId: 'only', type: 'wait', reached: 0, completed: 0, skipped: {}, failed: 0, bounced: 0, complained: 0, waiting: 0 }]);
    expect(figures.days.map((day) => day.date)).to.have.length(7);
    expect(figures.days.every((day) => day.enrollments === 0 && Object.keys(day.exits).length === 0)).to.equal(true);
    const rows = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_days WHERE sequence_id = ?', [sequence.id]);
    expect(Number(rows[0]!.n)).to.equal(0);
  });
});

describe('sequence stats: a step skipped for its contact', () => {
  it('counts an email step skipped for an unsubscribed contact by its reason, as the step the run left, not as completed', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await activeSequence(key, [
      { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hello</p>' },
      { id: 'after', type: 'wait', duration: 'P1D' },
    ]);
    const subscribed = await buildContact(accountId);
    const unsubscribed = await buildContact(accountId, { emailSubscriptionStatus: 'unsubscribed' });
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [subscribed.id, unsubscribed.id] });
    // No SMTP server: the subscribed contact's email is captured, the other's step skipped.
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const figures = await stats(key, sequence.id);
    expect(step(figures, 'mail')).to.deep.include({ reached: 2, completed: 1, skipped: { unsubscribed: 1 }, failed: 0, bounced: 0, complained: 0, waiting: 0 });
    expect(step(figures, 'after')).to.deep.include({ reached: 2, waiting: 2 });
  });
});
