import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { BoundedRedisClient } from '../../src/http/rate-limit/bounded-redis-client';
import { connectRedis } from '../../src/http/rate-limit/redis-client';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { redisMissing, startRedis, type ThrowawayServer } from '../support/throwaway-servers';
import { sleep, timed } from '../support/timing';

// docs/operations.md "Timeouts": a Redis that keeps the connection open and never answers (SIGSTOP) costs
// a keyed request at most a command's deadline (500 ms), as a dead one costs nothing: 503 with
// Retry-After. When it wakes, the service serves again by itself.

const missing = redisMissing();
const TITLE = missing ? `a frozen Redis (skipped: ${missing})` : 'a frozen Redis (SIGSTOP: connected, never answering)';
const UNAVAILABLE = { error: 'Rate limiting is unavailable; retry shortly', code: 'service_unavailable' };
const BOUND_MS = 2_000;

const keyed = (app: Express, key: string) => request(app).get('/api/v1/contacts/by-email/nobody%40example.com').set('x-api-key', key);

describe(TITLE, function () {
  let redis: ThrowawayServer | undefined;
  let client: BoundedRedisClient | undefined;
  let app: Express;

  before(async function () {
    if (missing) {
      if (process.env.CI) throw new Error(missing);
      this.skip();
    }
    redis = await startRedis();
    client = await connectRedis(redis.url, silentLogger);
    const config = { rateLimitPerMinute: 1_000, authFailureLimitPerMinute: 1_000 };
    app = createApp({ db: testDb(), config, logger: silentLogger, rateLimitLog: new RedisSlidingLog(client) });
  });
  // Even when a test fails half-way: nothing may stay frozen.
  afterEach(() => redis?.resume());
  after(async () => {
    client?.destroy();
    await redis?.stop();
  });

  it('answers keyed requests 503 with Retry-After within 2 s and /readyz 503, then serves again after SIGCONT without a restart', async () => {
    const { key } = await buildTenant();
    await client!.sendCommand(['SET', 'freeze:marker', 'written before the freeze']);
    expect((await keyed(app, key)).status).to.equal(404);
    expect((await request(app).get('/readyz')).body).to.deep.equal({ status: 'ready' });

    redis!.freeze();
    // A burst that is on the socket when the server stops, then requests over the next second.
    const during = await Promise.all(Array.from({ length: 8 }, () => timed(keyed(app, key))));
    for (let i = 0; i < 4; i += 1) {
      during.push(await timed(keyed(app, key)));
      await sleep(250);
    }
    const ready = await timed(request(app).get('/readyz'));

    for (const { res } of during) {
      expect(res.status, res.text).to.equal(503);
      expect(res.headers['retry-after']).to.equal('5');
      expect(res.body).to.deep.include(UNAVAILABLE);
    }
    const longest = Math.max(...during.map(({ ms }) => ms));
    expect(longest, 'longest response while frozen (ms)').to.be.below(BOUND_MS);
    expect(ready.res.status).to.equal(503);
    expect(ready.res.body).to.deep.include({ error: 'Redis unreachable' });
    expect(ready.ms, '/readyz while frozen (ms)').to.be.below(BOUND_MS);

    redis!.resume();
    const recovered = await firstSuccess(() => keyed(app, key), 5_000);
    expect(recovered.status, recovered.text).to.equal(404);
    // The replies owed for the commands given up on went to those commands, not to later ones.
    expect(await client!.sendCommand(['GET', 'freeze:marker'])).to.equal('written before the freeze');
    expect(await client!.sendCommand(['ECHO', 'after'])).to.equal('after');
    expect((await request(app).get('/readyz')).body).to.deep.equal({ status: 'ready' });
  });
});

async function firstSuccess(send: () => request.Test, withinMs: number): Promise<request.Response> {
  const until = Date.now() + withinMs;
  for (;;) {
    const res = await send();
    if (res.status !== 503 || Date.now() > until) return res;
    await sleep(50);
  }
}
