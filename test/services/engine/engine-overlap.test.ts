import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { SequenceEngine } from '../../../src/services/engine/engine';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { holdAfter } from '../../support/statement-gate';

// Overlap (docs/sequences.md "How runs move"): with a full batch, the loop's next pass claims
// and plans while the last one records, on another connection (MySQL: SQLite has one writer, and
// queues the claim behind the record). Each run is still recorded once.

describe('sequence engine: the next pass claims while the last one records (MySQL)', function () {
  this.timeout(60_000);

  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite runs one transaction at a time)';
      this.skip();
    }
  });

  it('claims batch 2 while batch 1\'s record is held open, and records every run once', async () => {
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({ name: 'Tag', status: 'active', steps: [{ id: 'mark', type: 'tag', add: ['x'] }] } as never);
    const contacts = [];
    for (let i = 0; i < 12; i += 1) contacts.push((await buildContact(accountId, { email: `o${i}@example.com` })).id);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: contacts });
    const engine = new SequenceEngine(testDb(), { logger: silentLogger, batchSize: 5, webhook: { timeoutMs: 2_000, allowInsecure: true } });
    // The first record, held after it inserted its executions (its transaction open, its runs locked).
    const gate = holdAfter(/^INSERT INTO run_step_executions/);
    try {
      engine.start();
      await gate.held;
      // Batch 2 claimed (its lease committed) while batch 1's record is still open.
      const claimedRuns = async () =>
        Number((await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND claim_token IS NOT NULL', [sequence.id]))[0]!.n);
      const until = Date.now() + 10_000;
      while ((await claimedRuns()) < 10 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await claimedRuns()).to.equal(10);
      gate.release();
      const deadline = Date.now() + 30_000;
      const done = async () => (await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? AND status = 'completed'", [sequence.id]))[0]!.n;
      while (Number(await done()) < 12 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      gate.restore();
      await engine.stop(1_000);
    }
    const executions = await select<{ run_id: string; n: number | string }>(
      testDb(),
      "SELECT run_id, COUNT(*) AS n FROM run_step_executions WHERE status = 'succeeded' GROUP BY run_id",
      [],
    );
    expect(executions).to.have.length(12);
    expect(executions.every((row) => Number(row.n) === 1)).to.equal(true);
    const tagged = await select<{ tags: string }>(testDb(), 'SELECT tags FROM contacts WHERE id IN (?)', [contacts]);
    expect(tagged.map((row) => JSON.parse(row.tags))).to.deep.equal(contacts.map(() => ['x']));
  });
});
