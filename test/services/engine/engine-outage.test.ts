import { expect } from 'chai';
import { LogThrottle } from '../../../src/logging/log-throttle';
import { SequenceEngine } from '../../../src/services/engine/engine';
import { WebhookDispatcher } from '../../../src/services/webhooks/dispatcher';
import { testDb, withFailingStatements } from '../../support/db';
import { bufferLogger } from '../../support/log-buffer';
import { manualTimers } from '../../support/manual-timers';
import { passesDuringOutage, refused, until } from '../../support/outage';
import { select } from '../../../src/db/sql/statements';
import { toDate } from '../../../src/db/sql/rows';
import { failStatements } from '../../support/commit-faults';
import { engineAt, enrolledRun } from './support';

// The engine while its database is down (docs/sequences.md "How runs move"): its passes back
// off (500 ms doubling to 15 s), the failures are logged at most once per cause per 10 s
// through the process's throttle (the one the webhook dispatcher and requests use), and the
// first pass after the database is back moves the runs that waited. Time is the test's.

const OUTAGE_MS = 60_000;


describe('sequence engine while the database is down', () => {
  it('backs off to 15 s, logs one line per 10 s, and moves the waiting run once the database is back', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    const clock = manualTimers(Date.now() + 1);
    const log = bufferLogger('info');
    const engine = new SequenceEngine(testDb(), { logger: log.logger, timers: clock.timers, webhook: { timeoutMs: 1_000, allowInsecure: true } });
    try {
      const { passesAt, waits } = await passesDuringOutage(clock, () => engine.start(), OUTAGE_MS);
      expect(passesAt).to.deep.equal([0, 500, 1_500, 3_500, 7_500, 15_500, 30_500, 45_500]);
      expect(waits).to.deep.equal([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
      const failures = log.records().filter((r) => r.msg === 'sequence engine pass failed');
      expect(failures.map((r) => [r.cause, r.failedPasses, r.suppressed])).to.deep.equal([
        ['database', 1, undefined],
        ['database', 6, 4],
        ['database', 7, undefined],
        ['database', 8, undefined],
      ]);
      expect((await run.timeline()).status).to.equal('pending');

      clock.fire();
      // The run completes inside the pass; the loop logs "resumed" after that pass returns.
      const resumed = () => log.records().some((r) => r.msg === 'sequence engine resumed');
      await until(async () => (await run.timeline()).status === 'completed' && resumed());
      expect(log.records().filter((r) => r.msg === 'sequence engine resumed').map((r) => r.failedPasses)).to.deep.equal([8]);
    } finally {
      await engine.stop(100);
    }
  });

  it('shares the process\'s throttle with the webhook dispatcher: one database line per 10 s between them', async () => {
    const clock = manualTimers(Date.now() + 1);
    const log = bufferLogger('info');
    const throttle = new LogThrottle(10_000, clock.now);
    const engine = new SequenceEngine(testDb(), { logger: log.logger, timers: clock.timers, logThrottle: throttle, webhook: { timeoutMs: 1_000, allowInsecure: true } });
    const settings = { allowInsecure: true, now: () => new Date(clock.now()) };
    const dispatcher = new WebhookDispatcher(testDb(), { settings, logger: log.logger, timers: clock.timers, logThrottle: throttle });
    try {
      await withFailingStatements({ scope: 'all', failure: refused }, async () => {
        engine.start();
        dispatcher.start();
        // Both loops' first passes (at 0), then the next two of each (0.5 s and 1.5 s).
        for (let fired = 0; fired < 4; fired += 1) {
          await clock.nextWait();
          clock.fire();
        }
        await clock.nextWait();
      });
      const lines = log.records().filter((r) => r.cause === 'database');
      expect(lines).to.have.length(1);
    } finally {
      await engine.stop(100);
      await dispatcher.stop(100);
    }
  });
});

describe('sequence engine: a pass that cannot record', () => {
  it('gives its claims back at once: the runs are due now, not when the lease ends, and the next pass moves them', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    const { engine, now } = engineAt();
    // The record's lock of the claimed runs fails (as on a statement deadline); the claim did not.
    const failing = failStatements(/^SELECT id, status FROM sequence_runs WHERE id IN/);
    try {
      await engine.runOnce().then(
        () => expect.fail('the pass should have failed'),
        (error: Error) => expect(error.message).to.contain('engine pass failed'),
      );
    } finally {
      failing.restore();
    }
    const [row] = await select<{ lease_until: unknown; claim_token: string | null }>(testDb(), 'SELECT lease_until, claim_token FROM sequence_runs WHERE id = ?', [run.runId]);
    // The lease ended at the failed pass's time (it would have been a minute later), its claim
    // kept for the dead-letter count.
    expect(toDate(row!.lease_until).getTime()).to.be.at.most(now());
    expect(row!.claim_token).to.be.a('string');
    // The clock has not moved: the next pass takes it at once.
    expect(await engine.runUntilIdle()).to.equal(1);
    expect((await run.timeline()).status).to.equal('completed');
    const [after] = await select<{ expired_claims: number | string }>(testDb(), 'SELECT expired_claims FROM sequence_runs WHERE id = ?', [run.runId]);
    expect(Number(after!.expired_claims)).to.equal(1);
    await engine.stop(100);
  });
});
