import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseJson } from '../../../src/db/sql/rows';
import { execute, select } from '../../../src/db/sql/statements';
import { chooseVariant } from '../../../src/services/engine/steps/split';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildTenant } from '../../support/factories';
import { engineAt } from './support';

// Sequences that react to activities (docs/activities.md, docs/sequences.md "Wait for an
// activity"): entry by event and its re-entry rules, wait_for matched by key as the activity
// commits (and when it committed just before the wait began), the timeout path, goals met
// wherever the run is, splits that never change their way. The engine's clock is the test's.

const HOUR = 3_600_000;

const CART_STEPS = [
  {
    id: 'checkout',
    type: 'wait_for',
    activity: 'checkout_completed',
    match: { cartId: '{{ trigger.properties.cartId }}' },
    timeout: 'PT3H',
    next: 'done',
    onTimeout: 'remind',
  },
  { id: 'remind', type: 'email', subject: 'Your cart {{ trigger.properties.cartId }} is waiting', html: '<p>Total {{ trigger.properties.total }}</p>' },
  { id: 'done', type: 'exit' },
];

async function cartShop(extra: Record<string, unknown> = {}) {
  const tenant = await buildTenant();
  const api = caller(tenant.key);
  const { sequence } = await api.sequences.create({
    name: 'Abandoned cart',
    status: 'active',
    steps: CART_STEPS,
    entry: { activity: 'cart_abandoned' },
    ...extra,
  } as never);
  const post = (email: string, name: string, properties: Record<string, unknown> = {}, more: Record<string, unknown> = {}) =>
    api.activities.record({ contact: { email }, name, properties, ...more } as never);
  const runs = async () => (await api.sequences.runs({ id: sequence.id })).runs;
  const runOf = async (runId: string) => (await api.sequences.run({ id: sequence.id, runId })).run;
  return { ...tenant, api, sequence, post, runs, runOf };
}

async function executionsOf(runId: string) {
  const rows = await select<{ step_id: string; status: string; detail: string | null }>(
    testDb(),
    'SELECT step_id, status, detail FROM run_step_executions WHERE run_id = ? ORDER BY visit, started_at',
    [runId],
  );
  return rows.map((row) => ({ stepId: row.step_id, status: row.status, detail: row.detail ? parseJson<Record<string, unknown>>(row.detail) : null }));
}

describe('sequences that react to activities', () => {
  describe('the abandoned cart, end to end', () => {
    it('enrolls on cart_abandoned in the activity\'s transaction, ignores another cart\'s checkout, moves on at the same cart\'s', async () => {
      const shop = await cartShop();
      const { activity } = await shop.post('ada@example.com', 'cart_abandoned', { cartId: 'c1', total: 59.9 });
      // The run exists when the 202 answers, with the activity as its trigger.
      const [run] = await shop.runs();
      expect(run).to.include({ contactId: activity.contactId, status: 'pending' });
      const [stored] = await select<{ trigger_activity: string }>(testDb(), 'SELECT trigger_activity FROM sequence_runs WHERE id = ?', [run!.id]);
      expect(parseJson<Record<string, unknown>>(stored!.trigger_activity)).to.deep.include({ id: activity.id, name: 'cart_abandoned', properties: { cartId: 'c1', total: 59.9 } });

      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      let detail = await shop.runOf(run!.id);
      expect(detail).to.include({ status: 'running', currentStepId: 'checkout', waitingFor: 'activity' });
      expect(detail.awaiting).to.deep.equal({ activity: 'checkout_completed', match: { cartId: 'c1' } });
      expect(detail.trigger).to.deep.include({ id: activity.id, name: 'cart_abandoned', properties: { cartId: 'c1', total: 59.9 } });
      // The timeout is the run's due time: three hours from the wait's start.
      expect(Date.parse(detail.dueAt!) - Date.parse(detail.executions[0]!.startedAt)).to.equal(3 * HOUR);
      expect(detail.executions[0]!.endsAt).to.equal(detail.dueAt);

      await shop.post('ada@example.com', 'checkout_completed', { cartId: 'c2' });
      advance(1_000);
      await engine.runUntilIdle();
      detail = await shop.runOf(run!.id);
      expect(detail).to.include({ status: 'running', currentStepId: 'checkout', waitingFor: 'activity' });

      const matched = await shop.post('ada@example.com', 'checkout_completed', { cartId: 'c1' });
      // Moved on in the activity's transaction: due now, its wait row gone.
      const [row] = await select<{ due_at: unknown; waited_activity: string }>(testDb(), 'SELECT due_at, waited_activity FROM sequence_runs WHERE id = ?', [run!.id]);
      expect(parseJson<Record<string, unknown>>(row!.waited_activity)).to.include({ id: matched.activity.id, name: 'checkout_completed' });
      expect(await select(testDb(), 'SELECT run_id FROM run_waits WHERE run_id = ?', [run!.id])).to.deep.equal([]);
      advance(1_000);
      await engine.runUntilIdle();
      detail = await shop.runOf(run!.id);
      expect(detail).to.include({ status: 'completed' });
      const executions = await executionsOf(run!.id);
      expect(executions.map((e) => [e.stepId, e.status])).to.deep.equal([
        ['checkout', 'succeeded'],
        ['done', 'succeeded'],
      ]);
      expect(executions[0]!.detail).to.deep.equal({ outcome: 'matched', activityId: matched.activity.id, activity: 'checkout_completed' });
    });

    it('sends the reminder, rendered from the trigger, when the timeout passes with no checkout', async () => {
      const shop = await cartShop();
      await shop.post('bea@example.com', 'cart_abandoned', { cartId: 'c9', total: 12 });
      const [run] = await shop.runs();
      const { engine, advance, messages } = engineAt();
      await engine.runUntilIdle();
      const waiting = await shop.runOf(run!.id);
      expect(waiting.waitingFor).to.equal('activity');
      advance(3 * HOUR - 60_000);
      await engine.runUntilIdle();
      expect((await shop.runOf(run!.id)).currentStepId).to.equal('checkout');
      advance(2 * 60_000);
      await engine.runUntilIdle();
      expect((await shop.runOf(run!.id)).status).to.equal('completed');
      const executions = await executionsOf(run!.id);
      expect(executions.map((e) => e.stepId)).to.deep.equal(['checkout', 'remind', 'done']);
      expect(executions[0]!.detail).to.deep.equal({ outcome: 'timed_out' });
      const [file] = readdirSync(messages.outboxDir);
      const eml = readFileSync(path.join(messages.outboxDir, file!), 'utf8');
      expect(eml).to.match(/^Subject: Your cart c9 is waiting$/m);
      expect(eml).to.include('Total 12');
    });

    it('matches a checkout recorded after the run came to the wait and before the wait began', async () => {
      const shop = await cartShop();
      await shop.post('cy@example.com', 'cart_abandoned', { cartId: 'c5' });
      const [run] = await shop.runs();
      // The engine has not looked yet: no wait row exists when the checkout commits.
      await shop.post('cy@example.com', 'checkout_completed', { cartId: 'c5' });
      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      advance(1_000);
      await engine.runUntilIdle();
      expect((await shop.runOf(run!.id)).status).to.equal('completed');
      expect((await executionsOf(run!.id))[0]!.detail).to.include({ outcome: 'matched' });
    });

    it('matches only the run\'s own contact, and a match value that renders empty matches nothing', async () => {
      const shop = await cartShop();
      await shop.post('dee@example.com', 'cart_abandoned', {});
      await shop.post('eve@example.com', 'cart_abandoned', { cartId: 'c7' });
      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      // Dee's trigger has no cartId: her wait has no row and ends at its timeout only.
      await shop.post('dee@example.com', 'checkout_completed', {});
      await shop.post('dee@example.com', 'checkout_completed', { cartId: '' });
      // Eve's cart, checked out by someone else.
      await shop.post('fay@example.com', 'checkout_completed', { cartId: 'c7' });
      advance(1_000);
      await engine.runUntilIdle();
      const runs = await shop.runs();
      expect(runs.filter((run) => run.status === 'running').map((run) => run.waitingFor)).to.deep.equal(['activity', 'activity']);
    });
  });

  describe('a match and the timeout at the same moment', () => {
    it('takes exactly one way: matched or timed out, never both, never neither', async () => {
      const shop = await cartShop();
      const emails = Array.from({ length: 6 }, (_, i) => `race${i}@example.com`);
      for (const email of emails) await shop.post(email, 'cart_abandoned', { cartId: email });
      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      // The timeout passes; the checkouts and the engine's pass race.
      advance(3 * HOUR + 1_000);
      await Promise.all([engine.runUntilIdle(), ...emails.map((email) => shop.post(email, 'checkout_completed', { cartId: email }))]);
      advance(1_000);
      await engine.runUntilIdle();
      for (const run of await shop.runs()) {
        expect(run.status).to.equal('completed');
        const executions = await executionsOf(run.id);
        const ways = executions.filter((e) => e.stepId === 'checkout').map((e) => e.detail?.outcome);
        expect(ways).to.have.length(1);
        const after = executions.map((e) => e.stepId).slice(1);
        expect(after).to.deep.equal(ways[0] === 'matched' ? ['done'] : ['remind', 'done']);
      }
      expect(await select(testDb(), 'SELECT run_id FROM run_waits WHERE account_id = ?', [shop.accountId])).to.deep.equal([]);
    });
  });

  describe('re-entry', () => {
    async function enterTwice(reentry: unknown, between?: () => Promise<void>) {
      const shop = await cartShop({ steps: [{ id: 'pause', type: 'wait', duration: 'PT1M' }], entry: { activity: 'cart_abandoned', ...(reentry === undefined ? {} : { reentry }) } });
      await shop.post('gus@example.com', 'cart_abandoned', { cartId: 'a' });
      // A second activity while the run is active never enrolls again (one active run).
      await shop.post('gus@example.com', 'cart_abandoned', { cartId: 'b' });
      expect(await shop.runs()).to.have.length(1);
      const [first] = await shop.runs();
      await shop.api.sequences.unenroll({ id: shop.sequence.id, contactIds: [first!.contactId] } as never);
      await between?.();
      await shop.post('gus@example.com', 'cart_abandoned', { cartId: 'c' });
      return { shop, runs: await shop.runs() };
    }

    it('after_exit (the default) enrolls again once the previous run has ended', async () => {
      const { runs } = await enterTwice(undefined);
      expect(runs.map((run) => run.status).sort()).to.deep.equal(['cancelled', 'pending']);
    });

    it('never enrolls a contact that had a run by an activity; the API trigger still can', async () => {
      const { shop, runs } = await enterTwice('never');
      expect(runs.map((run) => run.status)).to.deep.equal(['cancelled']);
      const outcome = await shop.api.sequences.trigger({ id: shop.sequence.id, contact: { email: 'gus@example.com' } } as never);
      expect(outcome).to.include({ enrolled: true });
    });

    it('{ after } enrolls again only once that long has passed since the previous run started', async () => {
      const { shop, runs } = await enterTwice({ after: 'P1D' });
      expect(runs).to.have.length(1);
      await execute(testDb(), 'UPDATE sequence_entries SET last_started_at = ? WHERE sequence_id = ?', [new Date(Date.now() - 25 * HOUR), shop.sequence.id]);
      await shop.post('gus@example.com', 'cart_abandoned', { cartId: 'd' });
      expect((await shop.runs()).map((run) => run.status).sort()).to.deep.equal(['cancelled', 'pending']);
    });

    it('enrolls no one while the sequence is not active, and follows where and the exit rules', async () => {
      const shop = await cartShop({
        entry: { activity: 'cart_abandoned', where: [{ property: 'total', gte: 50 }] },
        exitWhen: [{ tag: 'blocked' }],
      });
      await shop.post('hal@example.com', 'cart_abandoned', { total: 10 });
      await shop.post('hal@example.com', 'cart_abandoned', { total: '99' });
      expect(await shop.runs()).to.deep.equal([]);
      await shop.api.contacts.upsert({ email: 'ida@example.com', tags: ['blocked'] } as never);
      await shop.post('ida@example.com', 'cart_abandoned', { total: 80 });
      expect(await shop.runs()).to.deep.equal([]);
      await shop.api.sequences.update({ id: shop.sequence.id, status: 'paused' } as never);
      await shop.post('hal@example.com', 'cart_abandoned', { total: 80 });
      expect(await shop.runs()).to.deep.equal([]);
      await shop.api.sequences.update({ id: shop.sequence.id, status: 'active' } as never);
      await shop.post('hal@example.com', 'cart_abandoned', { total: 80 });
      expect(await shop.runs()).to.have.length(1);
    });

    it('enrolls each contact once under concurrent activities (the unique key decides)', async () => {
      const shop = await cartShop({ steps: [{ id: 'pause', type: 'wait', duration: 'PT1M' }] });
      await Promise.all(Array.from({ length: 8 }, (_, i) => shop.post('jo@example.com', 'cart_abandoned', { cartId: `k${i}` })));
      expect(await shop.runs()).to.have.length(1);
    });
  });

  describe('goals', () => {
    it('completes a run with goal_met mid-wait, and a goal outside `within` does not', async () => {
      const shop = await cartShop({ goal: { activity: 'order_placed', where: [{ property: 'total', gt: 0 }], within: 'P7D' } });
      await shop.post('kim@example.com', 'cart_abandoned', { cartId: 'x' });
      await shop.post('lee@example.com', 'cart_abandoned', { cartId: 'y' });
      const { engine } = engineAt();
      await engine.runUntilIdle();
      const byContact = new Map((await shop.runs()).map((run) => [run.contactId, run]));
      await shop.post('kim@example.com', 'order_placed', { total: 0 });
      const kim = await shop.post('kim@example.com', 'order_placed', { total: 20 });
      const converted = byContact.get(kim.activity.contactId)!;
      const detail = await shop.runOf(converted.id);
      expect(detail).to.include({ status: 'completed', reason: 'goal_met', currentStepId: 'checkout' });
      // Its wait_for execution ended with it.
      expect((await executionsOf(converted.id)).map((e) => e.status)).to.deep.equal(['skipped']);
      // A conversion, counted at the step it converted at.
      const { stats } = await shop.api.sequences.stats({ id: shop.sequence.id } as never);
      expect(stats.conversions.total).to.equal(1);
      expect(stats.conversions.steps.find((step: { stepId: string }) => step.stepId === 'checkout')).to.include({ converted: 1 });
      // Lee's run started 8 days ago: an order now is outside `within`.
      const other = [...byContact.values()].find((run) => run.id !== converted.id)!;
      await execute(testDb(), 'UPDATE sequence_runs SET started_at = ? WHERE id = ?', [new Date(Date.now() - 8 * 24 * HOUR), other.id]);
      await shop.post('lee@example.com', 'order_placed', { total: 20 });
      expect((await shop.runOf(other.id)).status).to.equal('running');
    });
  });

  describe('splits', () => {
    it('takes each run down the variant its run id and step id hash to, so a rerun after a crash takes the same', async () => {
      const variants = [
        { id: 'a', weight: 3, next: 'tag-a' },
        { id: 'b', weight: 1, next: 'tag-b' },
      ];
      const { key } = await buildTenant();
      const api = caller(key);
      const { sequence } = await api.sequences.create({
        name: 'Split',
        status: 'active',
        steps: [
          { id: 'fork', type: 'split', variants },
          { id: 'tag-a', type: 'tag', add: ['a'] },
          { id: 'end-a', type: 'exit' },
          { id: 'tag-b', type: 'tag', add: ['b'] },
        ],
      } as never);
      for (let i = 0; i < 40; i += 1) await api.sequences.trigger({ id: sequence.id, contact: { email: `s${i}@example.com` } } as never);
      const { engine } = engineAt();
      await engine.runUntilIdle();
      const runs = (await api.sequences.runs({ id: sequence.id, limit: 100 } as never)).runs;
      expect(runs).to.have.length(40);
      const taken = new Map<string, number>();
      for (const run of runs) {
        const [fork] = await executionsOf(run.id);
        const expected = chooseVariant(variants, run.id, 'fork');
        expect(fork!.detail).to.deep.equal({ variant: expected.id, to: expected.next });
        taken.set(expected.id, (taken.get(expected.id) ?? 0) + 1);
      }
      // Both ways are taken (3:1 by weight; 40 runs make an all-one-way split a 1e-5 chance).
      expect(taken.size).to.equal(2);
    });
  });
});
