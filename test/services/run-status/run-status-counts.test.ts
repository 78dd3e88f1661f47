import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { select } from '../../../src/db/sql/statements';
import { createMetrics } from '../../../src/metrics/metrics';
import { deleteContact, addTags } from '../../../src/services/contacts/contact-operations';
import { activeRunsBySequence, runStatusCounts } from '../../../src/services/run-status/run-status-counts';
import { enrollByIds } from '../../../src/services/sequences/enroll-by-ids';
import { moveRun, pauseRun, resumeRun } from '../../../src/services/sequences/run-transitions';
import { unenroll } from '../../../src/services/sequences/unenroll';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { RUN_STATUSES } from '../../../src/schemas/statuses';
import { caller, silentLogger } from '../../support/app';
import { captureQueries, testDb } from '../../support/db';
import { buildContact, buildSequence, buildTenant } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';
import { engineAt, enrolledRun } from '../engine/support';
import { claimDueRuns, loadClaimedRuns } from '../../../src/services/engine/run-queue';
import { planRun } from '../../../src/services/engine/plan-run';
import type { RunResult } from '../../../src/services/engine/claimed-run';
import { recordBatch } from '../../../src/services/engine/record-batch';
import { readVersions, versionKey } from '../../../src/services/runs/sequence-versions';

// sequence_runs{status} is kept by counters written in the transactions that move runs: after
// any sequence of operations, alone or concurrent, the counters equal a count over the table.

async function tableCounts(): Promise<Record<string, number>> {
  const rows = await select<{ status: string; n: number | string }>(testDb(), 'SELECT status, COUNT(*) AS n FROM sequence_runs GROUP BY status', []);
  const counts = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0]));
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

async function expectExact(when: string) {
  expect(await runStatusCounts(testDb()), when).to.deep.equal(await tableCounts());
  const active = await select<{ sequence_id: string; n: number | string }>(
    testDb(),
    "SELECT sequence_id, COUNT(*) AS n FROM sequence_runs WHERE status IN ('pending', 'running', 'paused') GROUP BY sequence_id",
    [],
  );
  const sequences = await select<{ id: string }>(testDb(), 'SELECT id FROM sequences', []);
  const counters = await activeRunsBySequence(testDb(), sequences.map((row) => row.id));
  const expected = new Map(active.map((row) => [row.sequence_id, Number(row.n)]));
  for (const { id } of sequences) expect(counters.get(id) ?? 0, `${when}: active runs of ${id}`).to.equal(expected.get(id) ?? 0);
}

describe('run status counters (runs by status, and each sequence\'s active runs)', () => {
  it('follow every writer of runs: enroll, trigger, the engine (local and webhook steps, waits, exits), pause, resume, runs.transition, unenroll, exit rules, contact deletion', async () => {
    const { key, accountId } = await buildTenant({ kind: 'runner' });
    const receiver = await startReceiver(() => 204);
    try {
      const { webhook } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
      const { sequence } = await caller(key).sequences.create({
        name: 'All moves',
        status: 'active',
        steps: [
          { id: 'hook', type: 'webhook', endpointId: webhook.id },
          { id: 'w', type: 'wait', duration: 'PT1H' },
          { id: 'mark', type: 'tag', add: ['done'] },
        ],
        exitWhen: [{ tag: 'stop' }],
      });
      const contacts = [];
      for (let i = 0; i < 6; i += 1) contacts.push(await buildContact(accountId));
      await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: contacts.map((c) => c.id) });
      await caller(key).sequences.trigger({ id: sequence.id, contact: { email: 'trigger@example.com' } });
      await expectExact('after enrolling');
      expect((await runStatusCounts(testDb())).pending).to.equal(7);

      const { engine, advance } = engineAt();
      await engine.runUntilIdle();
      await expectExact('after the webhook steps and the waits began');
      const runs = (await caller(key).sequences.runs({ id: sequence.id, limit: 100 })).runs;
      const byContact = new Map(runs.map((run) => [run.contactId, run.id]));

      await pauseRun(testDb(), { accountId, sequenceId: sequence.id, runId: byContact.get(contacts[0]!.id)! });
      await pauseRun(testDb(), { accountId, sequenceId: sequence.id, runId: byContact.get(contacts[1]!.id)! });
      await expectExact('after two pauses');
      await resumeRun(testDb(), { accountId, sequenceId: sequence.id, runId: byContact.get(contacts[1]!.id)! });
      await moveRun(testDb(), { accountId, runId: byContact.get(contacts[2]!.id)!, status: 'failed' });
      await unenroll(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contacts[3]!.id, contacts[0]!.id] });
      await addTags(testDb(), { accountId, id: contacts[4]!.id, tags: ['stop'] });
      await expectExact('after resume, runs.transition, unenroll and an exit rule');

      advance(2 * 3_600_000);
      await engine.runUntilIdle();
      await expectExact('after the engine completed the rest');
      await deleteContact(testDb(), { accountId, id: contacts[5]!.id });
      await deleteContact(testDb(), { accountId, id: contacts[3]!.id });
      await expectExact('after deleting contacts with runs');
      const counts = await runStatusCounts(testDb());
      expect(counts).to.deep.equal({ pending: 0, running: 0, paused: 0, completed: 2, failed: 1, cancelled: 2 });
    } finally {
      await receiver.close();
    }
  });

  it('follow the outbound outcomes: a last webhook step that succeeds completes its run, one that fails for good fails it', async () => {
    const { key, accountId } = await buildTenant();
    const receiver = await startReceiver(() => 204);
    try {
      const make = async (name: string) => {
        const { webhook } = await createWebhook(testDb(), { accountId, url: receiver.url, events: ['webhook.test'] }, { allowInsecure: true, now: () => new Date() });
        const { sequence } = await caller(key).sequences.create({ name, status: 'active', steps: [{ id: 'hook', type: 'webhook', endpointId: webhook.id }] });
        const contacts = [];
        for (let i = 0; i < 3; i += 1) contacts.push(await buildContact(accountId));
        await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: contacts.map((c) => c.id) });
        return webhook.id;
      };
      await make('Answered');
      const gone = await make('Endpoint gone');
      // Deleted behind the API's back (the API refuses while a sequence uses it): no retry can mend it.
      await select(testDb(), 'DELETE FROM webhook_endpoints WHERE id = ?', [gone]);
      const { engine } = engineAt();
      await engine.runUntilIdle();
      await expectExact('after the sends were answered');
      expect(await runStatusCounts(testDb())).to.deep.include({ pending: 0, running: 0, completed: 3, failed: 3 });
    } finally {
      await receiver.close();
    }
  });

  it('stay exact under concurrent enrolls, engine passes, pauses, resumes, unenrolls, exits and deletions', async function () {
    this.timeout(120_000);
    const { key, accountId } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({
      name: 'Busy',
      status: 'active',
      steps: [{ id: 'a', type: 'tag', add: ['a'] }, { id: 'w', type: 'wait', duration: 'PT1S' }, { id: 'b', type: 'tag', add: ['b'] }],
      exitWhen: [{ tag: 'stop' }],
    });
    const plain = await buildSequence(accountId);
    const contacts = [];
    for (let i = 0; i < 60; i += 1) contacts.push(await buildContact(accountId));
    const ids = contacts.map((c) => c.id);
    const engines = [engineAt(Date.now() + 5_000, { batchSize: 7 }), engineAt(Date.now() + 5_000, { batchSize: 11 })];
    const settle = (work: Promise<unknown>) => work.catch(() => undefined);
    const pick = (i: number) => ids[(i * 7) % ids.length]!;
    const operations: Array<() => Promise<unknown>> = [];
    for (let round = 0; round < 6; round += 1) {
      operations.push(
        () => enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: ids.slice(round * 10, round * 10 + 10) }),
        () => enrollByIds(testDb(), { accountId, sequenceId: plain.id, contactIds: ids.slice(0, 20 + round) }),
        () => engines[round % 2]!.engine.runOnce(),
        () => engines[(round + 1) % 2]!.engine.runOnce(),
        async () => {
          const runs = (await caller(key).sequences.runs({ id: sequence.id, limit: 100, active: 'true' })).runs;
          await Promise.all(runs.slice(0, 3).map((run) => settle(pauseRun(testDb(), { accountId, sequenceId: sequence.id, runId: run.id }))));
          await Promise.all(runs.slice(0, 2).map((run) => settle(resumeRun(testDb(), { accountId, sequenceId: sequence.id, runId: run.id }))));
        },
        () => unenroll(testDb(), { accountId, sequenceId: sequence.id, contactIds: [pick(round), pick(round + 1)] }),
        () => unenroll(testDb(), { accountId, sequenceId: plain.id, contactIds: [pick(round + 2)] }),
        () => addTags(testDb(), { accountId, id: pick(round + 3), tags: ['stop'] }),
        () => deleteContact(testDb(), { accountId, id: ids[59 - round]! }),
      );
    }
    await Promise.all(operations.map((operation) => settle(operation())));
    for (const { engine, advance } of engines) {
      advance(10_000);
      await settle(engine.runUntilIdle());
    }
    await expectExact('after the concurrent mix');
    const counts = await runStatusCounts(testDb());
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.be.greaterThan(50);
  });

  it('count a claimed run from the status it has when recorded, not the one it was claimed with', async () => {
    const run = await enrolledRun([{ id: 'mark', type: 'tag', add: ['x'] }]);
    const db = testDb();
    const now = new Date(Date.now() + 1);
    const claim = await claimDueRuns(db, now, { limit: 10, leaseMs: 60_000 });
    const runs = await loadClaimedRuns(db, claim);
    const versions = await readVersions(db, runs.map((r) => ({ sequenceId: r.sequenceId, version: r.version })));
    const planned = runs.map((r) => planRun(r, versions.get(versionKey(r.sequenceId, r.version)), now)) as RunResult[];
    // Claimed as pending; the runner moves it to running meanwhile (the claim stays).
    await moveRun(db, { accountId: run.accountId, runId: run.runId, status: 'running' });
    await recordBatch(db, planned, now);
    await expectExact('after the record');
    expect(await runStatusCounts(db)).to.deep.include({ pending: 0, running: 0, completed: 1 });
  });

  it('GET /metrics reads the counters: no statement over sequence_runs', async () => {
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contact = await buildContact(accountId);
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contact.id] });
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000, metricsToken: 'a-metrics-token-of-16' },
      logger: silentLogger,
      metrics: createMetrics(testDb()),
    });
    const { result, queries } = await captureQueries(() => request(app).get('/metrics').set('Authorization', 'Bearer a-metrics-token-of-16'));
    expect(result.status).to.equal(200);
    expect(result.text).to.include('sequence_runs{status="pending"} 1');
    expect(result.text).to.include('sequence_runs{status="completed"} 0');
    expect(queries.filter((sql) => /\bsequence_runs\b/.test(sql)), 'statements over sequence_runs').to.deep.equal([]);
  });
});
