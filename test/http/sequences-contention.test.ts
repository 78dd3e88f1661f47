import { expect } from 'chai';
import type { Response } from 'supertest';
import { AppError } from '../../src/errors/app-errors';
import type { RunStatus } from '../../src/schemas/statuses';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { moveRun } from '../../src/services/sequences/run-transitions';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { countLockFailures } from '../support/lock-failures';
import { storedRuns } from '../support/sequence-rows';
import { seededRandom } from '../support/random';

// Write contention across the operations that lock contacts and runs (issue 7): batch upserts,
// enrolls of many ids, unenrolls, triggers, enroll-by-email and the runner's run transitions,
// all at once on overlapping contacts of two sequences. Each takes its locks in the one order
// every writer follows (docs/idempotency.md "Concurrency and retries"), so none deadlocks: no request is
// retried, none answers 5xx, and what is stored matches the answers.

const ROUNDS = 10;
const POOL_SIZE = 300;
const EXISTING = 200;

function sample<T>(items: readonly T[], count: number, random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, count);
}

// The runner's next move for a run in each active status: the last one ends the run.
const NEXT: Record<string, RunStatus> = { pending: 'running', running: 'completed' };

describe('Sequences API under write contention', function () {
  this.timeout(180_000);

  it('enrolls, unenrolls, triggers, moves runs and batch-upserts overlapping contacts in parallel without a deadlock or a 5xx', async () => {
    const { key, accountId } = await buildTenant();
    const sequences = [(await buildSequence(accountId)).id, (await buildSequence(accountId)).id];
    const random = seededRandom(11);
    const pool = Array.from({ length: POOL_SIZE }, (_, i) => `mixed-${String(i).padStart(3, '0')}@example.com`);
    await batchUpsertContacts(testDb(), { accountId, contacts: pool.slice(0, 100).map((email) => ({ email })) });
    await batchUpsertContacts(testDb(), { accountId, contacts: pool.slice(100, EXISTING).map((email) => ({ email })) });
    const ids = (
      (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ?', {
        replacements: [accountId],
        type: 'SELECT',
      })) as Array<{ id: string }>
    ).map((row) => row.id);
    const pick = () => sequences[Math.floor(random() * sequences.length)];

    const responses: Array<{ kind: string; res: Response }> = [];
    const moves = { done: 0, ended: 0, refused: 0 };
    const locks = await countLockFailures(async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        // The runner moves runs (in-process: runs.transition is internal) while the API writes.
        const active = (await storedRuns({ accountId })).filter((run) => run.status in NEXT);
        const transitions = sample(active, 20, random).map(async (run) => {
          try {
            await moveRun(testDb(), { accountId, runId: run.id, status: NEXT[run.status] });
            moves.done += 1;
            if (NEXT[run.status] === 'completed') moves.ended += 1;
          } catch (error) {
            // An unenroll cancelled it first: the move is refused, as the contract says.
            if (!(error instanceof AppError) || error.status !== 409) throw error;
            moves.refused += 1;
          }
        });
        const calls: Array<{ kind: string; call: PromiseLike<Response> }> = [
          ...Array.from({ length: 6 }, (_, b) => ({
            kind: 'batch',
            call: api(key)
              .post('/contacts/batch')
              .send({ contacts: sample(pool, 100, random).map((email) => ({ email, customFields: { [`r${round}`]: b } })) }),
          })),
          ...Array.from({ length: 4 }, () => ({
            kind: 'enroll',
            call: api(key).post(`/sequences/${pick()}/enroll`).send({ contactIds: sample(ids, 150, random) }),
          })),
          ...Array.from({ length: 2 }, () => ({
            kind: 'unenroll',
            call: api(key).post(`/sequences/${pick()}/unenroll`).send({ contactIds: sample(ids, 150, random) }),
          })),
          ...sample(pool, 8, random).map((email, i) =>
            i % 2
              ? { kind: 'trigger', call: api(key).post(`/sequences/${pick()}/trigger`).send({ contact: { email, tags: [`r${round}`] } }) }
              : { kind: 'enroll-by-email', call: api(key).post(`/sequences/${pick()}/enroll-by-email`).send({ email, tags: [`r${round}`] }) },
          ),
        ];
        const [settled] = await Promise.all([Promise.all(calls.map(({ call }) => call)), Promise.all(transitions)]);
        settled.forEach((res, i) => responses.push({ kind: calls[i].kind, res }));
      }
    });

    const EXPECTED: Record<string, number[]> = {
      batch: [201],
      enroll: [201],
      unenroll: [200],
      trigger: [202],
      'enroll-by-email': [200, 201],
    };
    const unexpected = responses
      .filter(({ kind, res }) => !EXPECTED[kind].includes(res.status))
      .map(({ kind, res }) => `${kind}: ${res.status} ${res.text}`);
    expect(unexpected, unexpected.slice(0, 5).join('\n')).to.deep.equal([]);
    // Not one deadlock, not even one that a retry hid.
    expect(locks, 'statements refused for a lock').to.include({ deadlocks: 0, lockWaitTimeouts: 0 });

    const runs = await storedRuns({ accountId });
    const active = runs.filter((run) => ['pending', 'running', 'paused'].includes(run.status));
    expect(new Set(active.map((run) => `${run.contactId} ${run.sequenceId}`)).size).to.equal(active.length);
    const started =
      responses.filter(({ kind }) => kind === 'enroll').reduce((sum, { res }) => sum + res.body.summary.successful, 0) +
      responses.filter(({ kind, res }) => kind !== 'enroll' && res.body.enrolled === true).length;
    expect(runs).to.have.length(started);
    const cancelled = responses.filter(({ kind }) => kind === 'unenroll').reduce((sum, { res }) => sum + res.body.cancelled, 0);
    expect(runs.filter((run) => run.status === 'cancelled')).to.have.length(cancelled);
    expect(runs.filter((run) => run.status === 'completed')).to.have.length(moves.ended);
    expect(moves.ended, JSON.stringify(moves)).to.be.greaterThan(0);
    for (const { kind, res } of responses.filter((r) => r.kind === 'enroll')) {
      expect(res.body.summary.failed, kind).to.equal(0);
    }
  });
});
