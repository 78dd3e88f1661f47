import { expect } from 'chai';
import request from 'supertest';
import { execute, select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { onceForKey } from '../../src/services/idempotency/key-in-transaction';
import { unenroll } from '../../src/services/sequences/unenroll';
import { api, testApp } from '../support/app';
import { failStatements, loseCommitAnswerAfter } from '../support/commit-faults';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { storedEnrollments, storedRuns } from '../support/sequence-rows';

// docs/idempotency.md "Exactly once": an operation that enrolls commits its result on the
// Idempotency-Key's row in the transaction that starts (or ends) the runs. A retry after a crash
// between that COMMIT and the answer's storage, or after a 503 whose COMMIT was applied, is
// answered from that result: the first answer, and no second run.

const STORE_ANSWER = /UPDATE idempotency_keys SET status_code/;

// The claim of a crashed request has outlived its lifetime (its deadline and margin).
async function claimTimedOut(accountId: string, key: string) {
  await execute(testDb(), 'UPDATE idempotency_keys SET locked_until = ? WHERE account_id = ? AND idempotency_key = ?', [new Date(Date.now() - 1_000), accountId, key]);
}

async function endRunsOf(accountId: string, sequenceId: string, contactId: string) {
  await unenroll(testDb(), { accountId, sequenceId, contactIds: [contactId] });
}

describe('Idempotency-Key: exactly once across a crash or a 503 after the COMMIT', () => {
  it('trigger: the answer was never stored (the process died after the COMMIT); the retry, past the claim timeout, answers the first outcome and starts no second run', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com' } };
    const crash = failStatements(STORE_ANSWER);
    let first: request.Response;
    try {
      first = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-crash').send(body);
    } finally {
      crash.restore();
    }
    expect(crash.failed()).to.equal(1);
    expect(first.status).to.equal(202);
    expect(first.body.enrolled).to.equal(true);
    // The first run ends before the retry comes: the one-active-run rule no longer hides a second.
    await endRunsOf(accountId, sequence.id, first.body.contactId);
    await claimTimedOut(accountId, 't-crash');

    const retry = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-crash').send(body);
    expect(retry.status).to.equal(202);
    expect(retry.body).to.deep.equal(first.body);
    expect(retry.headers['idempotent-replayed']).to.equal('true');
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);

    // Its answer is stored now: a third attempt is a plain replay.
    const third = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-crash').send(body);
    expect(third.status).to.equal(202);
    expect(third.body).to.deep.equal(first.body);
    expect(third.headers['idempotent-replayed']).to.equal('true');
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('trigger: a 503 whose COMMIT was applied; the retry answers enrolled with that run, and there is one run', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com', firstName: 'Ada' } };
    const cut = loseCommitAnswerAfter(/INSERT INTO sequence_runs/);
    let first: request.Response;
    try {
      first = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-503').send(body);
    } finally {
      cut.restore();
    }
    expect(cut.fired()).to.equal(1);
    expect(first.status).to.equal(503);
    const [run] = await storedRuns({ sequenceId: sequence.id });
    expect(run, 'the COMMIT was applied').to.not.equal(undefined);
    await endRunsOf(accountId, sequence.id, run!.contactId);

    const retry = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 't-503').send(body);
    expect(retry.status).to.equal(202);
    expect(retry.body).to.deep.equal({ enrolled: true, contactId: run!.contactId, runId: run!.id });
    expect(retry.headers['idempotent-replayed']).to.equal('true');
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('enroll-by-email: the retry after a lost answer keeps the first status (201) and body', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { email: 'ada@example.com' };
    const crash = failStatements(STORE_ANSWER);
    let first: request.Response;
    try {
      first = await api(key).post(`/sequences/${sequence.id}/enroll-by-email`).set('Idempotency-Key', 'e-crash').send(body);
    } finally {
      crash.restore();
    }
    expect(first.status).to.equal(201);
    await endRunsOf(accountId, sequence.id, first.body.contactId);
    await claimTimedOut(accountId, 'e-crash');

    const retry = await api(key).post(`/sequences/${sequence.id}/enroll-by-email`).set('Idempotency-Key', 'e-crash').send(body);
    expect(retry.status).to.equal(201);
    expect(retry.body).to.deep.equal(first.body);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('enroll by ids: a 503 after the COMMIT; the retry answers the first summary, with one enrollment record and one run per contact', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const a = await buildContact(accountId);
    const b = await buildContact(accountId);
    const body = { contactIds: [a.id, b.id] };
    const cut = loseCommitAnswerAfter(/INSERT INTO enrollments/);
    let first: request.Response;
    try {
      first = await api(key).post(`/sequences/${sequence.id}/enroll`).set('Idempotency-Key', 'ids-503').send(body);
    } finally {
      cut.restore();
    }
    expect(first.status).to.equal(503);
    const [enrollment] = await storedEnrollments({ sequenceId: sequence.id });

    const retry = await api(key).post(`/sequences/${sequence.id}/enroll`).set('Idempotency-Key', 'ids-503').send(body);
    expect(retry.status).to.equal(201);
    expect(retry.body.enrollment.id).to.equal(enrollment!.id);
    expect(retry.body.summary).to.deep.include({ processed: 2, successful: 2, skipped: 0, failed: 0 });
    expect(await storedEnrollments({ sequenceId: sequence.id })).to.have.length(1);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(2);
  });

  it('unenroll: a 503 after the COMMIT; the retry answers the runs it cancelled, not "none"', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contact = await buildContact(accountId);
    await api(key).post(`/sequences/${sequence.id}/enroll`).send({ contactIds: [contact.id] }).expect(201);
    const cut = loseCommitAnswerAfter(/UPDATE sequence_runs SET status/);
    let first: request.Response;
    try {
      first = await api(key).post(`/sequences/${sequence.id}/unenroll`).set('Idempotency-Key', 'u-503').send({ contactIds: [contact.id] });
    } finally {
      cut.restore();
    }
    expect(first.status).to.equal(503);
    const retry = await api(key).post(`/sequences/${sequence.id}/unenroll`).set('Idempotency-Key', 'u-503').send({ contactIds: [contact.id] });
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.equal({ cancelled: 1, contactIds: [contact.id] });
  });

  it('tRPC: a trigger mutation whose answer was lost is answered from its committed result', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const input = { id: sequence.id, contact: { email: 'ada@example.com' } };
    const send = () => request(testApp()).post('/trpc/sequences.trigger').set('x-api-key', key).set('Idempotency-Key', 'trpc-crash').send(input);
    const crash = failStatements(STORE_ANSWER);
    let first: request.Response;
    try {
      first = await send();
    } finally {
      crash.restore();
    }
    expect(first.status).to.equal(200);
    await endRunsOf(accountId, sequence.id, first.body.result.data.contactId);
    await claimTimedOut(accountId, 'trpc-crash');
    const retry = await send();
    expect(retry.status).to.equal(200);
    expect(retry.body).to.deep.equal(first.body);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('a 503 before the COMMIT (nothing stored) frees the key: the retry runs, once', async () => {
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com' } };
    const crash = failStatements(/INSERT INTO sequence_runs/);
    try {
      const first = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 'pending').send(body);
      expect(first.status).to.equal(503);
    } finally {
      crash.restore();
    }
    const retry = await api(key).post(`/sequences/${sequence.id}/trigger`).set('Idempotency-Key', 'pending').send(body);
    expect(retry.status).to.equal(202);
    expect(retry.body.enrolled).to.equal(true);
    expect(retry.headers['idempotent-replayed']).to.equal(undefined);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });
});

describe('onceForKey (the key inside the operation\'s transaction)', () => {
  const scopeOf = (accountId: string, key: string, requestHash = 'h'.repeat(64)) => ({ accountId, key, requestHash });

  it('writes the key again with the result when its claim row is gone, and answers that result the next time', async () => {
    const { accountId } = await buildTenant();
    const scope = scopeOf(accountId, 'gone');
    let runs = 0;
    const work = async () => ({ n: (runs += 1) });
    const first = await withTransaction(testDb(), (t) => onceForKey(testDb(), scope, t, work));
    const second = await withTransaction(testDb(), (t) => onceForKey(testDb(), { ...scope }, t, work));
    expect(first).to.deep.equal({ n: 1 });
    expect(second).to.deep.equal({ n: 1 });
    expect(runs).to.equal(1);
    const rows = await select<{ operation_result: string }>(testDb(), 'SELECT operation_result FROM idempotency_keys WHERE account_id = ?', [accountId]);
    expect(rows.map((row) => JSON.parse(row.operation_result))).to.deep.equal([{ n: 1 }]);
  });

  it('refuses with 409, and runs nothing, when the key now belongs to another request', async () => {
    const { accountId } = await buildTenant();
    await withTransaction(testDb(), (t) => onceForKey(testDb(), scopeOf(accountId, 'taken', 'a'.repeat(64)), t, async () => 1));
    let ran = false;
    const attempt = withTransaction(testDb(), (t) =>
      onceForKey(testDb(), scopeOf(accountId, 'taken', 'b'.repeat(64)), t, async () => {
        ran = true;
        return 2;
      }),
    );
    await attempt.then(
      () => expect.fail('expected a conflict'),
      (error: { status?: number; code?: string }) => expect([error.status, error.code]).to.deep.equal([409, 'idempotency_in_progress']),
    );
    expect(ran).to.equal(false);
  });
});
