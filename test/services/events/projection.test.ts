import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { catchUpProjection } from '../../../src/services/events/projection/catch-up';
import { projectionTask } from '../../../src/services/events/projection/projection-task';
import { projectRunLog } from '../../../src/services/events/projection/projector';
import { caller, silentLogger } from '../../support/app';
import { failStatements } from '../../support/commit-faults';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { holdAfter } from '../../support/statement-gate';

// The run log and its projection (src/services/events/projection/, docs/architecture.md "The
// write path of one step"): a change to runs appends one row; the projector applies it to the
// counters and the events feed exactly once, in order.

type CreateInput = Parameters<ReturnType<typeof caller>['sequences']['create']>[0];

const count = async (sql: string, values: unknown[] = []) => Number((await select<{ n: number | string }>(testDb(), sql, values))[0]!.n);
const logRows = () => count('SELECT COUNT(*) AS n FROM run_log');
const runEvents = (accountId: string) =>
  select<{ seq: number | string; type: string; data: string }>(testDb(), "SELECT seq, type, data FROM events WHERE account_id = ? AND type LIKE 'run.%' ORDER BY seq", [accountId]);
const activeCounter = (sequenceId: string) => count('SELECT COALESCE(SUM(runs), 0) AS n FROM sequence_active_runs WHERE sequence_id = ?', [sequenceId]);
const enrollments = (sequenceId: string) => count("SELECT COALESCE(SUM(n), 0) AS n FROM sequence_days WHERE sequence_id = ? AND metric = 'enrollments'", [sequenceId]);

async function enrolled(contacts = 3) {
  const tenant = await buildTenant();
  const { sequence } = await caller(tenant.key).sequences.create({
    name: 'Projected',
    status: 'active',
    steps: [{ id: 'w', type: 'wait', duration: 'P1D' }],
  } as unknown as CreateInput);
  const ids: string[] = [];
  for (let i = 0; i < contacts; i += 1) ids.push((await buildContact(tenant.accountId, { email: `p${i}@example.com` })).id);
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: ids });
  return { ...tenant, sequenceId: sequence.id, contactIds: ids };
}

describe('run log projection', () => {
  it('an enroll appends one log row and writes no counter and no run event itself; the projector applies it once and deletes it', async () => {
    const { accountId, sequenceId } = await enrolled(3);
    expect(await logRows()).to.equal(1);
    expect(await activeCounter(sequenceId)).to.equal(0);
    expect(await runEvents(accountId)).to.deep.equal([]);

    const first = await projectRunLog(testDb());
    expect(first).to.include({ rows: 1, more: false });
    expect(await logRows()).to.equal(0);
    expect(await activeCounter(sequenceId)).to.equal(3);
    expect(await enrollments(sequenceId)).to.equal(3);
    expect((await runEvents(accountId)).map((event) => event.type)).to.deep.equal(['run.created', 'run.created', 'run.created']);

    // Nothing left: a second pass changes nothing.
    expect(await projectRunLog(testDb())).to.include({ rows: 0 });
    expect(await activeCounter(sequenceId)).to.equal(3);
    const [state] = await select<{ projected_seq: number | string }>(testDb(), "SELECT projected_seq FROM projections WHERE name = 'runs'", []);
    expect(Number(state!.projected_seq)).to.be.greaterThan(0);
  });

  it('a projection that fails before its COMMIT leaves its rows, and the next one counts them once', async () => {
    const { accountId, sequenceId } = await enrolled(2);
    const failing = failStatements(/^DELETE FROM run_log/);
    try {
      await projectRunLog(testDb()).then(
        () => expect.fail('the projection should have failed'),
        () => undefined,
      );
    } finally {
      failing.restore();
    }
    expect(await logRows()).to.equal(1);
    expect(await activeCounter(sequenceId)).to.equal(0);
    expect(await runEvents(accountId)).to.deep.equal([]);
    await projectRunLog(testDb());
    expect(await activeCounter(sequenceId)).to.equal(2);
    expect(await runEvents(accountId)).to.have.length(2);
  });

  it('keeps a run\'s events in the order of its changes, across many rows and batches', async () => {
    const { key, accountId, sequenceId, contactIds } = await enrolled(1);
    const [run] = await select<{ id: string }>(testDb(), 'SELECT id FROM sequence_runs WHERE contact_id = ?', [contactIds[0]]);
    for (let i = 0; i < 12; i += 1) {
      await caller(key).sequences.pauseRun({ id: sequenceId, runId: run!.id });
      await caller(key).sequences.resumeRun({ id: sequenceId, runId: run!.id });
    }
    expect(await logRows()).to.equal(25);
    // Batches of 4 rows: 7 projector transactions.
    let passes = 0;
    while ((await projectRunLog(testDb(), 4)).rows > 0) passes += 1;
    expect(passes).to.equal(7);
    const events = await runEvents(accountId);
    const moves = events.map((event) => {
      const data = JSON.parse(event.data) as { from?: string; to?: string };
      return event.type === 'run.created' ? 'created' : `${data.from}->${data.to}`;
    });
    expect(moves).to.deep.equal(['created', ...Array.from({ length: 12 }, () => ['pending->paused', 'paused->pending']).flat()]);
    // Numbered one after another, in the feed's commit order.
    const seqs = events.map((event) => Number(event.seq));
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    expect(await activeCounter(sequenceId)).to.equal(1);
  });

  it('a reader catches the projection up first: the feed, the stats and the sequences list show the write that came before them', async () => {
    const { key, sequenceId } = await enrolled(2);
    expect(await logRows()).to.equal(1);
    const { stats } = await caller(key).sequences.stats({ id: sequenceId });
    expect(stats.days.at(-1)!.enrollments).to.equal(2);
    expect(Date.parse(stats.asOf)).to.be.closeTo(Date.now(), 5_000);
    const { events } = await caller(key).events.list({ limit: 50 });
    expect(events.filter((event) => event.type === 'run.created')).to.have.length(2);
    expect(await logRows()).to.equal(0);
  });

  it('says how fresh the figures are when the catch-up cannot finish within its bound', async () => {
    await enrolled(1);
    const [row] = await select<{ created_at: unknown }>(testDb(), 'SELECT created_at FROM run_log', []);
    const failing = failStatements(/^DELETE FROM run_log/);
    try {
      const { asOf } = await catchUpProjection(testDb(), 0);
      expect(asOf.getTime()).to.equal(new Date(row!.created_at as string).getTime());
    } finally {
      failing.restore();
    }
  });

  if (process.env.TEST_DATABASE_URL?.startsWith('mysql')) {
    it('lets one projector at a time apply rows: a second one waits for the first\'s lock and then finds them gone', async () => {
      const { accountId, sequenceId } = await enrolled(3);
      const gate = holdAfter(/^DELETE FROM run_log/);
      try {
        const first = projectRunLog(testDb());
        await gate.held;
        const asked = gate.sent(/FROM projections WHERE name = 'runs'/);
        const second = projectRunLog(testDb());
        await asked;
        gate.release();
        const [a, b] = await Promise.all([first, second]);
        expect(a.rows + b.rows).to.equal(1);
      } finally {
        gate.restore();
      }
      expect(await activeCounter(sequenceId)).to.equal(3);
      expect(await runEvents(accountId)).to.have.length(3);
    });
  }

  it('runs as a task that a commit of this process wakes, and reports each row\'s lag', async () => {
    const lags: number[] = [];
    let observed!: () => void;
    const projected = new Promise<void>((resolve) => (observed = resolve));
    const metrics = { lagSeconds: { observe: (value: number) => (lags.push(value), observed()) } };
    // The idle poll is a minute away: only the commit's wake can explain a projection now.
    const task = projectionTask(testDb(), { intervalMs: 60_000, maxBatches: 10, wakeLingerMs: 0 }, { logger: silentLogger, metrics });
    task.start();
    try {
      const { sequenceId } = await enrolled(2);
      await projected;
      expect(await logRows()).to.equal(0);
      expect(await activeCounter(sequenceId)).to.equal(2);
      expect(lags).to.have.length(1);
      expect(lags[0]).to.be.within(0, 60);
    } finally {
      await task.stop();
    }
  });
});
