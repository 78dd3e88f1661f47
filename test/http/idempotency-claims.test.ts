import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { LogThrottle } from '../../src/logging/log-throttle';
import {
  claimIdempotencyKey,
  claimLifetimeMs,
  IDEMPOTENCY_CLAIM_TIMEOUT_MS,
  IDEMPOTENT_REQUEST_DEADLINE_MS,
  releaseIdempotencyKey,
  requestHash,
} from '../../src/services/idempotency/idempotency-keys';
import { silentLogger } from '../support/app';
import { failStatements, loseCommitAnswerAfter } from '../support/commit-faults';
import { testDb } from '../support/db';
import { buildSequence, buildTenant } from '../support/factories';
import { bufferLogger } from '../support/log-buffer';
import { manualTimers } from '../support/manual-timers';
import { until } from '../support/outage';
import { storedRuns } from '../support/sequence-rows';
import { holdAfter } from '../support/statement-gate';

// docs/idempotency.md "How long a claim lasts": a claim lasts no longer than its request can
// (its deadline, plus the time its last COMMIT may take), a request that ended in 503 before its
// COMMIT gives its claim back as soon as the database answers, and none of it lets a request
// that committed run twice.

const ADA = { email: 'ada@example.com', firstName: 'Ada' };
const LIFETIME = claimLifetimeMs();
// The release's own DELETE (its claim's row only), not the claim's stale-row one.
const RELEASE = /AND status_code IS NULL AND operation_result IS NULL AND locked_until = /;
const STORE_ANSWER = /UPDATE idempotency_keys SET status_code/;

function appWith(clock: ReturnType<typeof manualTimers>, logger = silentLogger, logThrottle?: LogThrottle): Express {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
    logger,
    logThrottle,
    idempotencyTimers: clock.timers,
  });
}

async function keyRows(accountId: string, key: string) {
  return select<{ status_code: number | null; operation_result: string | null }>(
    testDb(),
    'SELECT status_code, operation_result FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?',
    [accountId, key],
  );
}

async function contactsOf(accountId: string): Promise<number> {
  const [row] = await select<{ n: number }>(testDb(), 'SELECT COUNT(*) AS n FROM contacts WHERE account_id = ?', [accountId]);
  return Number(row!.n);
}

describe('Idempotency-Key: how long a claim lasts', () => {
  it('lasts the request deadline plus the COMMIT margin (13 s by default), never more than 60 s', () => {
    expect(IDEMPOTENT_REQUEST_DEADLINE_MS).to.equal(10_000);
    expect(LIFETIME).to.equal(13_000);
    expect(claimLifetimeMs(10_000, 5_000)).to.equal(15_000);
    expect(claimLifetimeMs(100_000, 3_000)).to.equal(IDEMPOTENCY_CLAIM_TIMEOUT_MS);
  });

  it('a claim whose request deadline (and margin) has passed is taken by a retry; before that, 409 in progress', async () => {
    const { accountId } = await buildTenant();
    const input = { accountId, key: 'k', requestHash: requestHash('POST', '/api/v1/contacts', ADA) };
    const t0 = Date.now();
    const first = await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0) });
    expect(first).to.deep.equal({ kind: 'claimed', lockedUntil: new Date(t0 + LIFETIME) });
    expect(await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0 + LIFETIME - 1) })).to.deep.equal({ kind: 'in_progress' });
    const second = await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0 + LIFETIME) });
    expect(second).to.deep.equal({ kind: 'claimed', lockedUntil: new Date(t0 + 2 * LIFETIME) });
  });

  it('a late release of the first claim leaves the claim of the retry that took the key', async () => {
    const { accountId } = await buildTenant();
    const input = { accountId, key: 'k', requestHash: requestHash('POST', '/api/v1/contacts', ADA) };
    const t0 = Date.now();
    const first = await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0) });
    await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0 + LIFETIME) });
    if (first.kind !== 'claimed') throw new Error('expected a claim');
    await releaseIdempotencyKey(testDb(), { accountId, key: 'k', lockedUntil: first.lockedUntil });
    expect(await keyRows(accountId, 'k')).to.have.length(1);
    expect(await claimIdempotencyKey(testDb(), { ...input, now: new Date(t0 + LIFETIME + 1) })).to.deep.equal({ kind: 'in_progress' });
  });

  it('a request past its deadline commits nothing (503), and a retry that took its expired claim runs once', async () => {
    const clock = manualTimers(Date.now());
    const app = appWith(clock);
    const { key, accountId } = await buildTenant();
    const send = () => request(app).post('/api/v1/contacts').set('x-api-key', key).set('Idempotency-Key', 'slow').send(ADA);
    const hold = holdAfter(/INSERT INTO .?contacts/);
    let slow: request.Response;
    let retry: request.Response;
    try {
      const slowAnswer = send().then((res) => res);
      await hold.held;
      // The first request is still in its transaction when its deadline and margin pass.
      clock.advance(LIFETIME);
      const retryAnswer = send().then((res) => res);
      // MySQL runs the retry at once: it takes the expired claim, and its INSERT waits for the
      // first one's lock. (SQLite queues its transactions: the retry's come after the first's.)
      if (testDb().dialect === 'mysql') await hold.sent(/INSERT INTO .?contacts/);
      hold.release();
      [slow, retry] = await Promise.all([slowAnswer, retryAnswer]);
    } finally {
      hold.restore();
    }
    expect(slow.status).to.equal(503);
    expect(slow.body.error).to.equal('Database busy; retry shortly');
    expect(retry.status).to.equal(201);
    expect(retry.headers['idempotent-replayed']).to.equal(undefined);
    expect(await contactsOf(accountId)).to.equal(1);
    // The retry's answer is the key's now.
    const again = await send();
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(retry.body);
  });
});

describe('Idempotency-Key: a 503 before the COMMIT gives the claim back once the database answers', () => {
  it('the release failed with the database away; an immediate retry once it is back runs (202), not 409, and enrolls once', async () => {
    const clock = manualTimers(Date.now());
    const app = appWith(clock);
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com' } };
    const send = () => request(app).post(`/api/v1/sequences/${sequence.id}/trigger`).set('x-api-key', key).set('Idempotency-Key', 'outage').send(body);
    const outage = failStatements(new RegExp(`INSERT INTO .?sequence_runs|${RELEASE.source}`));
    try {
      const first = await send();
      expect(first.status).to.equal(503);
      expect(first.body.error).to.equal('Database unavailable; retry shortly');
    } finally {
      outage.restore();
    }
    expect(outage.failed(), 'the operation and the release both failed').to.equal(2);
    // The claim is still there: before, a retry got 409 for the claim's 60 s.
    expect(await keyRows(accountId, 'outage')).to.have.length(1);

    const retry = await send();
    expect(retry.status).to.equal(202);
    expect(retry.body.enrolled).to.equal(true);
    expect(retry.headers['idempotent-replayed']).to.equal(undefined);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('another instance gets 409 until the background release reaches the database, then the retry runs', async () => {
    const clock = manualTimers(Date.now());
    const app = appWith(clock);
    const other = appWith(manualTimers(clock.now()));
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com' } };
    const sendTo = (target: Express) =>
      request(target).post(`/api/v1/sequences/${sequence.id}/trigger`).set('x-api-key', key).set('Idempotency-Key', 'elsewhere').send(body);
    const outage = failStatements(new RegExp(`INSERT INTO .?sequence_runs|${RELEASE.source}`));
    try {
      expect((await sendTo(app)).status).to.equal(503);
      // Still away: the background attempt fails too, and it tries again later.
      expect(await clock.nextWait()).to.equal(250);
      clock.fire();
      expect(await clock.nextWait()).to.equal(500);
    } finally {
      outage.restore();
    }
    expect(outage.failed()).to.equal(3);
    const refused = await sendTo(other);
    expect(refused.status).to.equal(409);
    expect(refused.body.code).to.equal('idempotency_in_progress');

    // The database answers: the next attempt frees the key.
    clock.fire();
    await until(async () => (await keyRows(accountId, 'elsewhere')).length === 0);
    const retry = await sendTo(other);
    expect(retry.status).to.equal(202);
    expect(retry.body.enrolled).to.equal(true);
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });

  it('a 503 whose COMMIT was applied keeps its key through the release retried: the retry replays it and nothing runs twice', async () => {
    const clock = manualTimers(Date.now());
    const app = appWith(clock);
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const body = { contact: { email: 'ada@example.com' } };
    const send = () => request(app).post(`/api/v1/sequences/${sequence.id}/trigger`).set('x-api-key', key).set('Idempotency-Key', 'applied').send(body);
    const cut = loseCommitAnswerAfter(/INSERT INTO .?sequence_runs/);
    const releaseFails = failStatements(RELEASE);
    let first: request.Response;
    try {
      first = await send();
    } finally {
      releaseFails.restore();
      cut.restore();
    }
    expect(cut.fired()).to.equal(1);
    expect(first.status).to.equal(503);
    const [run] = await storedRuns({ sequenceId: sequence.id });
    expect(run, 'the COMMIT was applied').to.not.equal(undefined);

    const [row] = await keyRows(accountId, 'applied');
    expect(row?.operation_result, 'the committed result is on the key').to.be.a('string');

    // The retry comes before the release tried again: it answers from the committed result.
    const retry = await send();
    expect(retry.status).to.equal(202);
    expect(retry.body).to.deep.equal({ enrolled: true, contactId: run!.contactId, runId: run!.id });
    expect(retry.headers['idempotent-replayed']).to.equal('true');
    // The late release, now that the database answers, frees nothing: the key carries its result.
    const watch = holdAfter(/^$/);
    try {
      const released = watch.sent(RELEASE);
      clock.fire();
      await released;
    } finally {
      watch.restore();
    }
    const third = await send();
    expect(third.status).to.equal(202);
    expect(third.body).to.deep.equal(retry.body);
    expect(third.headers['idempotent-replayed']).to.equal('true');
    expect(await storedRuns({ sequenceId: sequence.id })).to.have.length(1);
  });
});

describe('Idempotency-Key: "idempotency key not settled" goes through the log throttle', () => {
  it('20 answers whose storage failed write one line in the window; the next one after it says how many were left out', async () => {
    const clock = manualTimers(Date.now());
    const log = bufferLogger('info');
    const app = appWith(clock, log.logger, new LogThrottle(10_000, clock.now));
    const { key } = await buildTenant();
    const create = (i: number) => request(app).post('/api/v1/contacts').set('x-api-key', key).set('Idempotency-Key', `k-${i}`).send({ email: `c${i}@example.com` });
    const storeFails = failStatements(STORE_ANSWER);
    try {
      for (let i = 0; i < 20; i += 1) expect((await create(i)).status).to.equal(201);
      clock.advance(10_000);
      expect((await create(20)).status).to.equal(201);
    } finally {
      storeFails.restore();
    }
    expect(storeFails.failed()).to.equal(21);
    const lines = log.records().filter((record) => /idempotency key not settled/.test(record.msg));
    expect(lines.map((line) => [line.level, line.cause, line.suppressed])).to.deep.equal([
      ['error', 'database', undefined],
      ['error', 'database', 19],
    ]);
  });

  it('an outage that fails 20 triggers and their releases writes one line for it, whoever met it', async () => {
    const clock = manualTimers(Date.now());
    const log = bufferLogger('info');
    const app = appWith(clock, log.logger, new LogThrottle(10_000, clock.now));
    const { key, accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const outage = failStatements(new RegExp(`INSERT INTO .?sequence_runs|${RELEASE.source}`));
    try {
      for (let i = 0; i < 20; i += 1) {
        const res = await request(app).post(`/api/v1/sequences/${sequence.id}/trigger`).set('x-api-key', key).set('Idempotency-Key', `t-${i}`).send({ contact: { email: `c${i}@example.com` } });
        expect(res.status).to.equal(503);
      }
    } finally {
      outage.restore();
    }
    expect(outage.failed()).to.equal(40);
    const errors = log.records().filter((record) => record.level === 'error');
    expect(errors.map((line) => line.cause)).to.deep.equal(['database']);
    expect(log.records().filter((record) => /idempotency key not settled/.test(record.msg)).length).to.be.at.most(1);
  });
});
