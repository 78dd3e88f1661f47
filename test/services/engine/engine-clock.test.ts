import { expect } from 'chai';
import { execute, select } from '../../../src/db/sql/statements';
import { SequenceEngine } from '../../../src/services/engine/engine';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt } from './support';

// Time from one clock (docs/architecture.md "One clock"): claims, leases and due times are the
// database's, so a process whose own clock is off cannot take a lease another process holds.

const MINUTE = 60_000;

// An engine in a process whose clock is `skewMs` off. The database's clock (the test's time,
// which the test's timers answer with) is the same for every process; only the process's own
// clock is off.
function engineSkewedBy(skewMs: number, test: ReturnType<typeof engineAt>) {
  const own = manualTimers(test.now() + skewMs);
  return new SequenceEngine(testDb(), {
    logger: silentLogger,
    timers: { ...own.timers, databaseNow: test.clock.timers.databaseNow },
    webhook: { timeoutMs: 1_000, allowInsecure: true, random: () => 0.5 },
  });
}

// The lease on the run's send (the outbox row's claim): a webhook step's run waits at its step,
// unclaimed, while the outbound layer holds its send.
async function leaseOf(runId: string) {
  const [row] = await select<{ claim_token: string | null }>(testDb(), 'SELECT claim_token FROM outbox WHERE run_id = ?', [runId]);
  return row?.claim_token ?? null;
}

describe('sequence engine: one clock', () => {
  it("two engines whose clocks are five minutes apart cannot take each other's live lease", async () => {
    const { key, accountId } = await buildTenant();
    const receiver = await startReceiver(() => 'hang');
    try {
      const { webhook } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(key).sequences.create({ name: 'Hook', status: 'active', steps: [{ id: 'notify', type: 'webhook', endpointId: webhook.id }] });
      const contact = await buildContact(accountId);
      await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
      const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
      // Due ten minutes ago: due for both engines, whichever clock they go by.
      await execute(testDb(), 'UPDATE sequence_runs SET due_at = ? WHERE id = ?', [new Date(Date.now() - 10 * MINUTE), run!.id]);

      const test = engineAt();
      const slow = engineSkewedBy(-5 * MINUTE, test);
      const fast = engineSkewedBy(5 * MINUTE, test);

      // The slow one takes the run and its send; the request hangs, the send's lease is live.
      const slowPass = slow.runOnce();
      while (receiver.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const held = await leaseOf(run!.id);
      expect(held).to.be.a('string');
      // The fast one finds nothing due: the lease is live by the database's clock.
      expect(await fast.runOnce()).to.equal(0);
      expect(await leaseOf(run!.id)).to.equal(held);
      // One run claimed, one send started.
      expect(await slowPass).to.equal(2);
      expect(receiver.received).to.have.length(1);

      // The other way round: the attempt failed (no answer in time) and is retried 5 s later.
      // The fast one takes the retry; the slow one cannot take it from it.
      test.advance(6_000);
      const fastPass = fast.runOnce();
      while (receiver.received.length === 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await slow.runOnce()).to.equal(0);
      expect(await fastPass).to.equal(1);
      expect(receiver.received).to.have.length(2);
      expect(receiver.received[1]!.headers['webhook-id']).to.equal(receiver.received[0]!.headers['webhook-id']);
      const detail = (await caller(key).sequences.run({ id: sequence.id, runId: run!.id })).run;
      expect(detail.executions.map((e) => [e.attempt, e.status])).to.deep.equal([
        [1, 'failed'],
        [2, 'failed'],
      ]);
    } finally {
      await receiver.close();
    }
  });
});
