import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { execute, insertRows, select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { connectRedis } from '../../../src/http/rate-limit/redis-client';
import { LogThrottle } from '../../../src/logging/log-throttle';
import { DEFAULT_CHANNEL_SETTINGS } from '../../../src/services/channels/channel-settings';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { senderRates } from '../../../src/services/channels/sender-rates';
import { putWhatsAppChannel } from '../../../src/services/channels/whatsapp-channel';
import type { Channel } from '../../../src/services/engine/outbound/channels/channel';
import { OutboundDispatcher } from '../../../src/services/engine/outbound/dispatcher';
import { DatabaseSendRate } from '../../../src/services/engine/outbound/send-rate/database-send-rate';
import { RedisSendRate } from '../../../src/services/engine/outbound/send-rate/redis-send-rate';
import type { SendRate } from '../../../src/services/engine/outbound/send-rate/send-rate';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { engineAt } from './support';
import { channelSettings } from '../../support/channels';
import { buildContact, buildTenant } from '../../support/factories';

const settings = channelSettings();

// The email and WhatsApp throttle in the dispatcher (docs/channels.md "Throttles"): each
// account's maxPerSecond, shared by every dispatcher, on the engine's clock. A channel named
// 'email' here only notes when each send started (the email channel itself is tested with its
// SMTP server); the sends are queued as an email step queues them, for runs that are live.

interface Started {
  accountId: string;
  at: number;
  id: string;
}

function recordingChannel(name: string, started: Started[], now: () => number): Channel {
  return {
    name,
    async load() {
      return async (send) => {
        started.push({ accountId: send.accountId, at: now(), id: send.id });
        return { ok: true, reason: null, detail: {}, final: false, abandoned: false };
      };
    },
  };
}

// A tenant whose email sender is at `maxPerSecond`, with `count` live runs, each with an email
// send queued (due now).
async function sendersWithSends(...senders: Array<{ maxPerSecond: number; count: number; channel?: string }>) {
  const tenants = [];
  for (const { maxPerSecond, count } of senders) tenants.push(await senderWithRuns(maxPerSecond, count));
  // The runs begin their step (the send's step: they wait there for its outcome), before any
  // send is queued (this engine's dispatcher would claim them).
  await engineAt().engine.runUntilIdle();
  for (const [i, tenant] of tenants.entries()) await queueSends(tenant.accountId, senders[i]!.channel ?? 'email');
  return tenants;
}

async function senderWithRuns(maxPerSecond: number, count: number) {
  const tenant = await buildTenant();
  await putEmailChannel(testDb(), { accountId: tenant.accountId, from: 'news@shop.example', maxPerSecond }, settings);
  await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: '1000', accessToken: 'EAAG-test-token-1234', maxPerSecond }, settings);
  const { sequence } = await caller(tenant.key).sequences.create({ name: 'Throttled', status: 'active', steps: [{ id: 'later', type: 'wait', duration: 'P1D' }] } as never);
  const contacts = [];
  for (let i = 0; i < count; i += 1) contacts.push(await buildContact(tenant.accountId));
  await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: contacts.map((contact) => contact.id) });
  return tenant;
}

async function queueSends(accountId: string, channel: string) {
  const runs = await select<{ id: string; visit: number | string }>(testDb(), 'SELECT id, visit FROM sequence_runs WHERE account_id = ?', [accountId]);
  const queuedAt = new Date(Date.now() - 1_000);
  await withTransaction(testDb(), (transaction) => insertRows(
    testDb(),
    'outbox',
    ['id', 'account_id', 'run_id', 'run_visit', 'step_id', 'step_visit', 'channel', 'target', 'idempotency_id', 'body', 'status', 'attempt', 'due_at', 'created_at', 'updated_at'],
    runs.map((run) => [randomUUID(), accountId, run.id, Number(run.visit), 'later', 1, channel, 'sender', `run_${run.id}_later_1`, '{}', 'queued', 0, queuedAt, queuedAt, queuedAt]),
    transaction,
  ));
}

function dispatcher(sendRate: SendRate, clock: { now: number }, started: Started[]) {
  return new OutboundDispatcher(testDb(), {
    logger: silentLogger,
    logThrottle: new LogThrottle(10_000, () => clock.now),
    now: () => clock.now,
    channels: [recordingChannel('email', started, () => clock.now), recordingChannel('whatsapp', started, () => clock.now)],
    leaseMs: 60_000,
    idlePollMs: 1_000,
    maxInFlight: 100,
    perTarget: 32,
    perAccountPerSecond: () => Infinity,
    throttle: {
      sendRate,
      channels: ['email', 'whatsapp'],
      rates: (channel, accountIds) => senderRates(testDb(), channel as 'email' | 'whatsapp', accountIds, DEFAULT_CHANNEL_SETTINGS),
    },
    wake: () => {},
    recorded: () => {},
  });
}

// Starts per account per second of the engine's clock, counted from `start`.
function perSecond(started: readonly Started[], accountId: string, start: number): number[] {
  const counts: number[] = [];
  for (const { at } of started.filter((one) => one.accountId === accountId)) {
    const second = Math.floor((at - start) / 1000);
    counts[second] = (counts[second] ?? 0) + 1;
  }
  return Array.from(counts, (count) => count ?? 0);
}

function throttles(makeRates: () => Promise<[SendRate, SendRate]>) {
  // A second boundary of the engine's clock, ahead of the real one (the sends are due).
  const startOfSecond = () => Math.ceil(Date.now() / 1000) * 1000 + 5_000;

  it('an account at 2/s starts 2 sends per second of the engine clock, while an account at 10/s is not held back by it; none dropped, and the dispatcher sleeps until the next second', async () => {
    const [rate] = await makeRates();
    const [slow, fast] = await sendersWithSends({ maxPerSecond: 2, count: 6 }, { maxPerSecond: 10, count: 6 });
    const start = startOfSecond();
    const clock = { now: start };
    const started: Started[] = [];
    const one = dispatcher(rate, clock, started);
    const waits: number[] = [];
    for (let pass = 0; pass < 20 && started.length < 12; pass += 1) {
      const { nextAt } = await one.pass();
      await one.settled();
      waits.push(nextAt - clock.now);
      clock.now = Math.max(clock.now, nextAt);
    }
    expect(perSecond(started, fast.accountId, start), 'the fast account').to.deep.equal([6]);
    expect(perSecond(started, slow.accountId, start), 'the slow account').to.deep.equal([2, 2, 2]);
    expect(new Set(started.map((send) => send.id)).size, 'each send once').to.equal(12);
    // Between the seconds it slept until the next one began, not a look per millisecond.
    expect(waits.filter((wait) => wait === 0).length, `waits: ${waits.join(', ')}`).to.be.at.most(3);
    expect(waits.some((wait) => wait >= 999), `waits: ${waits.join(', ')}`).to.equal(true);
    const left = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM outbox WHERE account_id IN (?) AND status = 'queued'", [[slow.accountId, fast.accountId]]);
    expect(Number(left[0]!.n)).to.equal(0);
  });

  it('two dispatchers (two processes) together hold the account to its rate, email and WhatsApp apart', async () => {
    const [a, b] = await makeRates();
    const [slow, onWhatsApp] = await sendersWithSends({ maxPerSecond: 2, count: 6 }, { maxPerSecond: 3, count: 6, channel: 'whatsapp' });
    const start = startOfSecond();
    const clock = { now: start };
    const started: Started[] = [];
    const first = dispatcher(a, clock, started);
    const second = dispatcher(b, clock, started);
    for (let pass = 0; pass < 40 && started.length < 12; pass += 1) {
      const [x, y] = await Promise.all([first.pass(), second.pass()]);
      await Promise.all([first.settled(), second.settled()]);
      clock.now = Math.max(clock.now, Math.min(x.nextAt, y.nextAt));
    }
    expect(perSecond(started, slow.accountId, start)).to.deep.equal([2, 2, 2]);
    expect(perSecond(started, onWhatsApp.accountId, start)).to.deep.equal([3, 3]);
    expect(new Set(started.map((send) => send.id)).size).to.equal(12);
  });

  it('gives back what it reserved and did not start: sends set aside (their run paused) leave the second to the others', async () => {
    const [rate] = await makeRates();
    const [tenant] = await sendersWithSends({ maxPerSecond: 2, count: 4 });
    // Two of the runs are paused, and their sends come first in the queue.
    const paused = (await select<{ run_id: string }>(testDb(), 'SELECT run_id FROM outbox WHERE account_id = ? ORDER BY id LIMIT 2', [tenant!.accountId])).map((row) => row.run_id);
    await execute(testDb(), "UPDATE sequence_runs SET status = 'paused' WHERE id IN (?)", [paused]);
    await execute(testDb(), 'UPDATE outbox SET due_at = ? WHERE run_id IN (?)', [new Date(Date.now() - 60_000), paused]);
    const start = startOfSecond();
    const clock = { now: start };
    const started: Started[] = [];
    const one = dispatcher(rate, clock, started);
    for (let pass = 0; pass < 10 && started.length < 2; pass += 1) {
      const { nextAt } = await one.pass();
      await one.settled();
      clock.now = Math.max(clock.now, nextAt);
    }
    expect(started).to.have.length(2);
    expect(started.every((send) => send.at === start), 'both in the first second').to.equal(true);
  });

  it('a lower rate set by the account applies within a second', async () => {
    const [rate] = await makeRates();
    const [tenant] = await sendersWithSends({ maxPerSecond: 4, count: 8 });
    const start = startOfSecond();
    const clock = { now: start };
    const started: Started[] = [];
    const one = dispatcher(rate, clock, started);
    await one.pass();
    await one.settled();
    expect(started).to.have.length(4);
    await putEmailChannel(testDb(), { accountId: tenant.accountId, from: 'news@shop.example', maxPerSecond: 1 }, settings);
    for (let pass = 0; pass < 20 && started.length < 8; pass += 1) {
      const { nextAt } = await one.pass();
      await one.settled();
      clock.now = Math.max(clock.now, nextAt);
    }
    expect(perSecond(started, tenant.accountId, start)).to.deep.equal([4, 1, 1, 1, 1]);
  });
}

describe('the email and WhatsApp throttle in the dispatcher', () => {
  describe('counted in the database', () => {
    throttles(async () => [new DatabaseSendRate(testDb()), new DatabaseSendRate(testDb())]);
  });

  it('starts none of its senders\' messages while its store cannot answer (they wait, none dropped), and sends them once it answers again', async () => {
    const [tenant] = await sendersWithSends({ maxPerSecond: 5, count: 3 });
    const store = new DatabaseSendRate(testDb());
    let down = true;
    const flaky: SendRate = {
      reserve: (...args) => (down ? Promise.reject(new Error('redis unreachable')) : store.reserve(...args)),
      release: (...args) => store.release(...args),
    };
    const clock = { now: Math.ceil(Date.now() / 1000) * 1000 + 5_000 };
    const started: Started[] = [];
    const one = dispatcher(flaky, clock, started);
    for (let pass = 0; pass < 3; pass += 1) {
      const { nextAt } = await one.pass();
      await one.settled();
      expect(nextAt - clock.now, 'it looks again after the idle poll, not at once').to.equal(1_000);
      clock.now = nextAt;
    }
    expect(started).to.have.length(0);
    const queued = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM outbox WHERE account_id = ? AND status = 'queued'", [tenant!.accountId]);
    expect(Number(queued[0]!.n)).to.equal(3);
    down = false;
    await one.pass();
    await one.settled();
    expect(started.map((send) => send.accountId)).to.deep.equal([tenant!.accountId, tenant!.accountId, tenant!.accountId]);
  });

  const url = process.env.TEST_REDIS_URL;
  describe(url ? 'counted in Redis' : 'counted in Redis (skipped: TEST_REDIS_URL is not set)', function () {
    const clients: Array<Awaited<ReturnType<typeof connectRedis>>> = [];
    before(function () {
      if (!url) this.skip();
    });
    after(() => {
      for (const client of clients.splice(0)) client.destroy();
    });
    throttles(async () => {
      const a = await connectRedis(url!, silentLogger);
      const b = await connectRedis(url!, silentLogger);
      clients.push(a, b);
      return [new RedisSendRate(a), new RedisSendRate(b)];
    });
  });
});
