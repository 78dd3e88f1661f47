import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { select } from '../../../src/db/sql/statements';
import { getContact } from '../../../src/services/contacts/find-contact';
import { listEvents } from '../../../src/services/events/list-events';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt } from './support';

// The engine moving runs by itself (docs/sequences.md "How runs move"), on the engine's clock:
// the test moves it, nothing waits for real.

async function timeline(key: string, sequenceId: string, runId: string) {
  return (await caller(key).sequences.run({ id: sequenceId, runId })).run;
}

describe('sequence engine', () => {
  it('runs wait -> tag -> exit: sleeps through the wait, then tags and completes, each step recorded once', async () => {
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [
        { id: 'pause', type: 'wait', duration: 'PT5S' },
        { id: 'mark', type: 'tag', add: ['welcomed'] },
        { id: 'done', type: 'exit' },
      ],
    });
    expect(sequence.version).to.equal(1);
    const contact = await buildContact(accountId);
    const { summary } = await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    expect(summary.successful).to.equal(1);
    const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
    expect(run).to.include({ status: 'pending', version: 1, currentStepId: 'pause' });

    const { engine, advance } = engineAt(Date.now() + 1);
    expect(await engine.runOnce()).to.equal(1);
    let detail = await timeline(key, sequence.id, run!.id);
    expect(detail).to.include({ status: 'running', currentStepId: 'pause' });
    expect(detail.executions).to.have.length(1);
    expect(detail.executions[0]).to.include({ stepId: 'pause', type: 'wait', attempt: 1, status: 'running', finishedAt: null });

    // Nothing is due before the wait ends.
    advance(4_000);
    expect(await engine.runOnce()).to.equal(0);
    advance(1_001);
    await engine.runUntilIdle();
    detail = await timeline(key, sequence.id, run!.id);
    expect(detail).to.include({ status: 'completed', currentStepId: null, reason: null });
    expect(detail.executions.map((e) => [e.stepId, e.status, e.attempt])).to.deep.equal([
      ['pause', 'succeeded', 1],
      ['mark', 'succeeded', 1],
      ['done', 'succeeded', 1],
    ]);
    expect((await getContact(testDb(), { accountId, id: contact.id })).tags).to.deep.equal(['welcomed']);

    const events = await listEvents(testDb(), { accountId, limit: 100 });
    const types = events.events.map((event) => event.type);
    expect(types.filter((type) => type === 'run.step_completed')).to.have.length(3);
    expect(types).to.include('contact.updated');
    const moves = events.events
      .filter((event) => event.type === 'run.status_changed')
      .map((event) => `${(event.data as { from: string }).from}->${(event.data as { to: string }).to}`);
    expect(moves).to.deep.equal(['pending->running', 'running->completed']);
  });

  it('signs the webhook step as events are, with one id per run and step that every retry repeats', async () => {
    const { key, accountId } = await buildTenant();
    let answers = [500, 204];
    const receiver = await startReceiver(() => answers.shift() ?? 204);
    try {
      const { webhook, secret } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(key).sequences.create({
        name: 'Hook',
        status: 'active',
        steps: [{ id: 'notify', type: 'webhook', endpointId: webhook.id, payload: { campaign: 'welcome' } }],
      });
      const contact = await buildContact(accountId, { firstName: 'Ada' });
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const { engine, advance } = engineAt(Date.now() + 1);
      await engine.runOnce();
      advance(10_000);
      await engine.runOnce();
      expect(receiver.received).to.have.length(2);
      const [first, second] = receiver.received;
      expect(first!.headers['webhook-id']).to.equal(second!.headers['webhook-id']);
      const verified = new Webhook(secret).verify(second!.body, second!.headers as Record<string, string>) as {
        id: string;
        type: string;
        data: { step: { id: string }; contact: { id: string; firstName: string }; payload: unknown; run: { id: string } };
      };
      expect(verified.type).to.equal('run.step');
      expect(verified.id).to.equal(second!.headers['webhook-id']);
      expect(verified.data.step.id).to.equal('notify');
      expect(verified.data.contact).to.include({ id: contact.id, firstName: 'Ada' });
      expect(verified.data.payload).to.deep.equal({ campaign: 'welcome' });
      const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      const detail = await timeline(key, sequence.id, run!.id);
      expect(detail.status).to.equal('completed');
      expect(detail.executions.map((e) => [e.attempt, e.status, e.detail?.responseStatus])).to.deep.equal([
        [1, 'failed', 500],
        [2, 'succeeded', 204],
      ]);
      const rows = await select<{ n: number }>(testDb(), "SELECT COUNT(*) AS n FROM run_step_executions WHERE status = 'succeeded'", []);
      expect(Number(rows[0]!.n)).to.equal(1);
    } finally {
      await receiver.close();
    }
  });
});
