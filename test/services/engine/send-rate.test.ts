import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { connectRedis } from '../../../src/http/rate-limit/redis-client';
import { DatabaseSendRate } from '../../../src/services/engine/outbound/send-rate/database-send-rate';
import { RedisSendRate } from '../../../src/services/engine/outbound/send-rate/redis-send-rate';
import type { SendRate } from '../../../src/services/engine/outbound/send-rate/send-rate';
import { select } from '../../../src/db/sql/statements';
import { silentLogger } from '../../support/app';
import { testDb } from '../../support/db';

// The throttle shared by every process that sends (docs/channels.md "Throttles"): two
// instances stand for two processes; on MariaDB their reservations run on separate connections
// at once, and on Redis through separate clients.

const SECOND = Date.UTC(2026, 10, 26, 12, 0, 0);

function behavesAsOneThrottle(make: () => Promise<[SendRate, SendRate]>) {
  it('grants at most perSecond in one second across both, whatever the concurrency', async () => {
    const [a, b] = await make();
    const account = randomUUID();
    const grants = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve(account, 'email', 3, 10, SECOND + i * 10)),
    );
    expect(grants.reduce((sum, grant) => sum + grant.granted, 0)).to.equal(10);
    for (const grant of grants) expect(grant.retryAt).to.equal(SECOND + 1000);
  });

  it('starts again at the next second, and keeps accounts and channels apart', async () => {
    const [a, b] = await make();
    const account = randomUUID();
    const other = randomUUID();
    expect((await a.reserve(account, 'email', 5, 5, SECOND)).granted).to.equal(5);
    expect((await b.reserve(account, 'email', 1, 5, SECOND + 999)).granted, 'the same second').to.equal(0);
    expect((await b.reserve(account, 'whatsapp', 2, 5, SECOND + 999)).granted, 'another channel').to.equal(2);
    expect((await b.reserve(other, 'email', 5, 5, SECOND + 999)).granted, 'another account').to.equal(5);
    expect((await b.reserve(account, 'email', 7, 5, SECOND + 1000)).granted, 'the next second').to.equal(5);
  });

  it('gives back what was reserved and not started, within its second only', async () => {
    const [a, b] = await make();
    const account = randomUUID();
    expect((await a.reserve(account, 'email', 4, 4, SECOND + 100)).granted).to.equal(4);
    await a.release(account, 'email', 3, SECOND + 200);
    expect((await b.reserve(account, 'email', 4, 4, SECOND + 300)).granted).to.equal(3);
    await b.release(account, 'email', 10, SECOND + 1100);
    expect((await b.reserve(account, 'email', 9, 4, SECOND + 1200)).granted, 'a release in another second gives nothing back').to.equal(4);
  });
}

describe('the shared send throttle', () => {
  describe('in the database', () => {
    behavesAsOneThrottle(async () => [new DatabaseSendRate(testDb()), new DatabaseSendRate(testDb())]);

    it('keeps only the current second of a sender', async () => {
      const rate = new DatabaseSendRate(testDb());
      const account = randomUUID();
      for (let i = 0; i < 5; i += 1) await rate.reserve(account, 'email', 1, 10, SECOND + i * 1000);
      const rows = await select<{ window_start: number | string }>(testDb(), 'SELECT window_start FROM send_rate_windows WHERE account_id = ?', [account]);
      expect(rows.map((row) => Number(row.window_start))).to.deep.equal([SECOND + 4000]);
    });
  });

  const url = process.env.TEST_REDIS_URL;
  describe(url ? 'in Redis' : 'in Redis (skipped: TEST_REDIS_URL is not set; CI sets it, locally run bash scripts/ci/start-redis.sh)', function () {
    const clients: Array<Awaited<ReturnType<typeof connectRedis>>> = [];
    before(function () {
      if (!url) this.skip();
    });
    after(() => {
      for (const client of clients.splice(0)) client.destroy();
    });
    behavesAsOneThrottle(async () => {
      const a = await connectRedis(url!, silentLogger);
      const b = await connectRedis(url!, silentLogger);
      clients.push(a, b);
      return [new RedisSendRate(a), new RedisSendRate(b)];
    });

    it('loads its script again after Redis forgot it', async () => {
      const client = await connectRedis(url!, silentLogger);
      clients.push(client);
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      expect((await new RedisSendRate(client).reserve(randomUUID(), 'email', 2, 5, SECOND)).granted).to.equal(2);
    });
  });
});
