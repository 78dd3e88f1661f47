import { expect } from 'chai';
import { execute, insertRows, select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { getContact } from '../../../src/services/contacts/find-contact';
import { MAX_STEPS_PER_PASS } from '../../../src/services/engine/plan-run';
import { listEvents } from '../../../src/services/events/list-events';
import { newRowId } from '../../../src/services/ids';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt, enrolledRun } from './support';

// A run's consecutive local steps in one pass (docs/sequences.md "How runs move"): tag, update,
// branch and exit (and a wait that is over) go on to the run's next step in the same record,
// until a step waits or sends, the run ends, a change is refused, an exit rule holds, the
// window is closed, or MAX_STEPS_PER_PASS steps are taken.

async function executionsOf(runId: string) {
  return select<{ step_id: string; visit: number | string; attempt: number | string; status: string; detail: string | null }>(
    testDb(),
    'SELECT step_id, visit, attempt, status, detail FROM run_step_executions WHERE run_id = ? ORDER BY visit, started_at',
    [runId],
  );
}

async function runRow(runId: string) {
  const [row] = await select<{ status: string; visit: number | string; current_step_id: string | null; due_at: unknown }>(
    testDb(),
    'SELECT status, visit, current_step_id, due_at FROM sequence_runs WHERE id = ?',
    [runId],
  );
  return row!;
}

async function runEvents(accountId: string) {
  const { events } = await listEvents(testDb(), { accountId, limit: 200 });
  return events
    .filter((event) => event.type.startsWith('run.') && event.type !== 'run.created')
    .map((event) => {
      const data = event.data as { from?: string; to?: string; step?: { id: string } };
      if (event.type === 'run.status_changed') return `${event.type} ${data.from}->${data.to}`;
      return data.step ? `${event.type} ${data.step.id}` : event.type;
    });
}

const LOCAL5 = [
  { id: 'mark', type: 'tag', add: ['bench'] },
  { id: 'fork', type: 'branch', if: { tag: 'bench' }, then: 'note', else: 'done' },
  { id: 'note', type: 'update', customFields: { stage: 'five' } },
  { id: 'mark2', type: 'tag', add: ['bench2'] },
  { id: 'done', type: 'exit' },
];

describe('sequence engine: consecutive local steps in one pass', () => {
  it('runs tag -> branch -> update -> tag -> exit in one pass: five executions on consecutive visits, an event per step, one status change', async () => {
    const run = await enrolledRun(LOCAL5);
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'completed', currentStepId: null, reason: null });
    const executions = await executionsOf(run.runId);
    expect(executions.map((e) => [e.step_id, Number(e.visit), Number(e.attempt), e.status])).to.deep.equal([
      ['mark', 0, 1, 'succeeded'],
      ['fork', 1, 1, 'succeeded'],
      ['note', 2, 1, 'succeeded'],
      ['mark2', 3, 1, 'succeeded'],
      ['done', 4, 1, 'succeeded'],
    ]);
    // The branch read the contact as the chain's tag left it.
    expect(JSON.parse(executions[1]!.detail!)).to.deep.equal({ took: 'then', to: 'note' });
    const contact = await getContact(testDb(), { accountId: run.accountId, id: run.contact.id });
    expect(contact.tags).to.deep.equal(['bench', 'bench2']);
    expect(contact.customFields).to.deep.equal({ stage: 'five' });
    expect(Number((await runRow(run.runId)).visit)).to.equal(4);
    expect(await runEvents(run.accountId)).to.deep.equal([
      'run.step_completed mark',
      'run.step_completed fork',
      'run.step_completed note',
      'run.step_completed mark2',
      'run.step_completed done',
      'run.status_changed pending->completed',
    ]);
    // Nothing is left for a next pass.
    expect(await engine.runOnce()).to.equal(0);
  });

  it('a branch in the chain goes the way the contact as changed by the chain says', async () => {
    const run = await enrolledRun([
      { id: 'set', type: 'update', customFields: { plan: 'pro' } },
      { id: 'fork', type: 'branch', if: { field: 'plan', equals: 'pro' }, then: 'pro', else: 'free' },
      { id: 'free', type: 'tag', add: ['free'] },
      { id: 'pro', type: 'tag', add: ['pro'] },
    ], {}, { tags: ['old'], customFields: { plan: 'free' } });
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    expect((await run.timeline()).status).to.equal('completed');
    expect((await executionsOf(run.runId)).map((e) => e.step_id)).to.deep.equal(['set', 'fork', 'pro']);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['old', 'pro']);
  });

  it('a chain that reaches a wait begins the wait in the same pass', async () => {
    const run = await enrolledRun([
      { id: 'mark', type: 'tag', add: ['a'] },
      { id: 'pause', type: 'wait', duration: 'PT1H' },
      { id: 'mark2', type: 'tag', add: ['b'] },
    ]);
    const { engine, now, advance } = engineAt();
    const start = now();
    expect(await engine.runOnce()).to.equal(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'running', currentStepId: 'pause', waitingFor: 'wait' });
    expect(new Date(detail.dueAt!).getTime()).to.be.within(start + 3_600_000 - 1_000, start + 3_600_000 + 1_000);
    expect((await executionsOf(run.runId)).map((e) => [e.step_id, Number(e.visit), e.status])).to.deep.equal([
      ['mark', 0, 'succeeded'],
      ['pause', 1, 'running'],
    ]);
    expect(await runEvents(run.accountId)).to.deep.equal(['run.step_completed mark', 'run.status_changed pending->running']);
    expect(await engine.runOnce()).to.equal(0);
    // The wait's end chains into the tag after it.
    advance(3_600_000 + 1_000);
    expect(await engine.runOnce()).to.equal(1);
    expect((await run.timeline()).status).to.equal('completed');
    expect((await executionsOf(run.runId)).map((e) => [e.step_id, Number(e.visit), e.status])).to.deep.equal([
      ['mark', 0, 'succeeded'],
      ['pause', 1, 'succeeded'],
      ['mark2', 2, 'succeeded'],
    ]);
  });

  it('a chain that reaches a webhook step queues its send in the same pass, composed with the contact as the chain left it', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const { key, accountId } = await buildTenant();
      const { webhook } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(key).sequences.create({
        name: 'Hook chain',
        status: 'active',
        steps: [
          { id: 'mark', type: 'tag', add: ['hooked'] },
          { id: 'fork', type: 'branch', if: { tag: 'hooked' }, then: 'notify', else: 'done' },
          { id: 'notify', type: 'webhook', endpointId: webhook.id, payload: { n: 1 } },
          { id: 'done', type: 'exit' },
        ],
      });
      const contact = await buildContact(accountId);
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      const { engine } = engineAt();
      // The record and the send's start are one pass; the answer is recorded when it comes.
      expect(await engine.runOnce()).to.be.at.least(1);
      const [send] = await select<{ step_id: string; run_visit: number | string; idempotency_id: string; body: string }>(
        testDb(),
        'SELECT step_id, run_visit, idempotency_id, body FROM outbox WHERE run_id = ?',
        [run!.id],
      );
      expect(send).to.include({ step_id: 'notify', idempotency_id: `run_${run!.id}_notify_1` });
      expect(Number(send!.run_visit)).to.equal(2);
      const body = JSON.parse(send!.body) as { data: { run: { currentStepId: string }; contact: { tags: string[] } } };
      expect(body.data.run.currentStepId).to.equal('notify');
      expect(body.data.contact.tags).to.deep.equal(['hooked']);
      // (The receiver may have answered within the pass already: the webhook's own execution.)
      expect((await executionsOf(run!.id)).slice(0, 2).map((e) => [e.step_id, Number(e.visit), e.status])).to.deep.equal([
        ['mark', 0, 'succeeded'],
        ['fork', 1, 'succeeded'],
      ]);
      await engine.runUntilIdle();
      for (let i = 0; i < 50 && (await caller(key).sequences.run({ id: sequence.id, runId: run!.id })).run.status !== 'completed'; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await engine.runUntilIdle();
      }
      expect((await caller(key).sequences.run({ id: sequence.id, runId: run!.id })).run.status).to.equal('completed');
      expect(receiver.received).to.have.length(1);
      expect(receiver.received[0]!.headers['webhook-id']).to.equal(`run_${run!.id}_notify_1`);
    } finally {
      await receiver.close();
    }
  });

  it('a local loop stops at the bound, left due now at the step it reached, and carries on at the next pass', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    // A loop of local steps no definition passes validation with (a cycle needs a wait), as a
    // stored version could hold it: tag, then a branch back to the tag.
    await withTransaction(testDb(), (transaction) =>
      insertRows(
        testDb(),
        'sequence_versions',
        ['id', 'account_id', 'sequence_id', 'version', 'steps', 'created_at'],
        [[newRowId(), run.accountId, run.sequence.id, 2, JSON.stringify([
          { id: 'mark', type: 'tag', add: ['x'] },
          { id: 'again', type: 'branch', if: { tag: 'x' }, then: 'mark', else: 'done' },
          { id: 'done', type: 'exit' },
        ]), new Date()]],
        transaction,
      ),
    );
    await execute(testDb(), 'UPDATE sequence_runs SET version = 2 WHERE id = ?', [run.runId]);
    const { engine, now } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    let executions = await executionsOf(run.runId);
    expect(executions).to.have.length(MAX_STEPS_PER_PASS);
    expect(executions.map((e) => Number(e.visit))).to.deep.equal(Array.from({ length: MAX_STEPS_PER_PASS }, (_, i) => i));
    const row = await runRow(run.runId);
    expect(row).to.include({ status: 'running', current_step_id: MAX_STEPS_PER_PASS % 2 === 1 ? 'again' : 'mark' });
    expect(Number(row.visit)).to.equal(MAX_STEPS_PER_PASS);
    expect(new Date(row.due_at as string).getTime()).to.be.at.most(now());
    expect(await engine.runOnce()).to.equal(1);
    executions = await executionsOf(run.runId);
    expect(executions).to.have.length(2 * MAX_STEPS_PER_PASS);
    expect(executions.map((e) => Number(e.visit))).to.deep.equal(Array.from({ length: 2 * MAX_STEPS_PER_PASS }, (_, i) => i));
    expect(executions.every((e) => e.status === 'succeeded')).to.equal(true);
  });

  it('a chain step whose change breaks the contact\'s limits fails there, after the earlier steps are recorded', async () => {
    const tags = Array.from({ length: 99 }, (_, i) => `t${i}`);
    const run = await enrolledRun([
      { id: 'one', type: 'tag', add: ['a'] },
      { id: 'fork', type: 'branch', if: { tag: 'a' }, then: 'more', else: 'done' },
      { id: 'more', type: 'tag', add: ['b', 'c'] },
      { id: 'done', type: 'exit' },
    ], {}, { tags });
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'failed', currentStepId: 'more' });
    expect(detail.reason).to.match(/^step "more": /);
    expect((await executionsOf(run.runId)).map((e) => [e.step_id, Number(e.visit), e.status])).to.deep.equal([
      ['one', 0, 'succeeded'],
      ['fork', 1, 'succeeded'],
      ['more', 2, 'failed'],
    ]);
    const contact = await getContact(testDb(), { accountId: run.accountId, id: run.contact.id });
    expect(contact.tags).to.have.length(100);
    expect(contact.tags).to.include('a');
    expect(await runEvents(run.accountId)).to.deep.equal([
      'run.step_completed one',
      'run.step_completed fork',
      'run.step_failed more',
      'run.status_changed pending->failed',
    ]);
  });

  it('an exit rule met by the chain\'s own change cancels the run there', async () => {
    const run = await enrolledRun(
      [
        { id: 'one', type: 'tag', add: ['x'] },
        { id: 'buy', type: 'tag', add: ['purchased'] },
        { id: 'pitch', type: 'tag', add: ['pitched'] },
        { id: 'done', type: 'exit' },
      ],
      { exitWhen: [{ tag: 'purchased' }] },
    );
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', reason: 'exitWhen: the contact got the tag "purchased"' });
    expect((await executionsOf(run.runId)).map((e) => [e.step_id, e.status])).to.deep.equal([
      ['one', 'succeeded'],
      ['buy', 'succeeded'],
    ]);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal(['x', 'purchased']);
    expect(await runEvents(run.accountId)).to.deep.equal(['run.step_completed one', 'run.step_completed buy', 'run.status_changed pending->cancelled']);
  });

  it('a step that acts, reached mid-chain outside the sending window, waits there for the opening', async () => {
    const hour = new Date().getUTCHours();
    // A window the current time is outside of.
    const window = hour < 12 ? { from: '13:00', to: '14:00' } : { from: '01:00', to: '02:00' };
    const run = await enrolledRun(
      [
        { id: 'fork', type: 'branch', if: { tag: 'vip' }, then: 'mark', else: 'mark' },
        { id: 'mark', type: 'tag', add: ['x'] },
      ],
      { sendingWindow: { timeZone: 'UTC', ...window } },
    );
    const { engine } = engineAt();
    expect(await engine.runOnce()).to.equal(1);
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'running', currentStepId: 'mark', waitingFor: 'window' });
    const opening = new Date(detail.dueAt!);
    expect(opening.getUTCHours()).to.equal(Number(window.from.slice(0, 2)));
    expect((await executionsOf(run.runId)).map((e) => [e.step_id, Number(e.visit), e.status])).to.deep.equal([['fork', 0, 'succeeded']]);
    expect(Number((await runRow(run.runId)).visit)).to.equal(1);
    expect((await getContact(testDb(), { accountId: run.accountId, id: run.contact.id })).tags).to.deep.equal([]);
    expect(await runEvents(run.accountId)).to.deep.equal(['run.step_completed fork', 'run.status_changed pending->running']);
  });
});
