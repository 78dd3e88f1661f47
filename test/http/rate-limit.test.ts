import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { connectRedis } from '../../src/http/rate-limit/redis-client';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { MemorySlidingLog, type SlidingLog } from '../../src/http/rate-limit/sliding-window-store';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';
import { buildApiKey, buildContact, buildTenant } from '../support/factories';

// docs/decisions.md "Rate limits": per key, across REST and tRPC, on a rolling minute; failed auth
// per client IP; one shared budget across instances when Redis is configured; fail closed.

const MINUTE = 60_000;
const PER_KEY = 5;
const PER_IP_FAILED_AUTH = 3;
const UNAVAILABLE = { error: 'Rate limiting is unavailable; retry shortly', code: 'service_unavailable' };

// Fail closed: 503 with Retry-After, never a pass or a 500; `{ error }` on REST, tRPC's
// envelope (SERVICE_UNAVAILABLE) on /trpc so that tRPC clients can read it.
function expectUnavailable(res: request.Response) {
  expect(res.status).to.equal(503);
  expect(res.headers['retry-after'], 'Retry-After').to.match(/^[1-9]\d*$/);
  if (!new URL(res.request.url).pathname.startsWith('/trpc/')) return void expect(res.body).to.deep.include(UNAVAILABLE);
  expect(res.body.error.message).to.equal(UNAVAILABLE.error);
  expect(res.body.error.data).to.include({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
}

function limitedApp(rateLimitLog?: SlidingLog): Express {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: PER_KEY, authFailureLimitPerMinute: PER_IP_FAILED_AUTH },
    logger: silentLogger,
    rateLimitLog,
  });
}

const rest = (app: Express, key?: string) => {
  const test = request(app).get('/api/v1/contacts/by-email/nobody%40example.com');
  return key === undefined ? test : test.set('x-api-key', key);
};
const trpc = (app: Express, key: string) =>
  request(app)
    .get(`/trpc/contacts.getByEmail?input=${encodeURIComponent(JSON.stringify({ email: 'nobody@example.com' }))}`)
    .set('x-api-key', key);

async function times(n: number, send: () => request.Test): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 1) statuses.push((await send()).status);
  return statuses;
}

// REST answers { error }; /trpc answers in tRPC's error envelope so its clients can read it.
function expectRateLimited(res: request.Response) {
  expect(res.status).to.equal(429);
  if (new URL(res.request.url).pathname.startsWith('/trpc/')) {
    expect(res.body.error).to.deep.include({ code: -32029, message: 'Rate limit exceeded' });
    expect(res.body.error.data).to.include({ code: 'TOO_MANY_REQUESTS', httpStatus: 429 });
  } else {
    expect(res.body).to.deep.include({ error: 'Rate limit exceeded' });
  }
  expect(res.headers['retry-after'], 'Retry-After').to.match(/^\d+$/);
  const seconds = Number(res.headers['retry-after']);
  expect(seconds).to.be.greaterThan(0).and.at.most(60);
}

// `"api-key"; r=4; t=60` -> { r: 4, t: 60 }
function rateLimitFields(header: string | undefined): Record<string, string> {
  expect(header, 'RateLimit header').to.be.a('string');
  return Object.fromEntries(
    header!
      .split(';')
      .slice(1)
      .map((part) => part.trim().split('=') as [string, string]),
  );
}

describe('rate limits', () => {
  describe('MemorySlidingLog (injected clock)', () => {
    let now = 0;
    let log: MemorySlidingLog;
    const clock = () => now;

    beforeEach(() => {
      now = 1_000_000;
      log = new MemorySlidingLog(MINUTE, clock);
    });
    afterEach(() => log.shutdown());

    it('accepts the limit within one window and refuses the next hit', async () => {
      const results = [];
      for (let i = 0; i < 4; i += 1) {
        results.push(await log.hit('k', MINUTE, 3));
        now += 1_000;
      }
      expect(results.map((r) => r.hits)).to.deep.equal([1, 2, 3, 4]);
      expect(results.map((r) => r.oldestMs)).to.deep.equal([1_000_000, 1_000_000, 1_000_000, 1_000_000]);
    });

    it('frees one slot exactly when the oldest hit leaves the window, not the whole budget', async () => {
      await log.hit('k', MINUTE, 3); // t0
      now += 30_000;
      await log.hit('k', MINUTE, 3); // t0 + 30 s
      await log.hit('k', MINUTE, 3);

      now = 1_000_000 + MINUTE - 1;
      expect((await log.hit('k', MINUTE, 3)).hits, '1 ms before the oldest hit expires').to.equal(4);

      now = 1_000_000 + MINUTE;
      const freed = await log.hit('k', MINUTE, 3);
      expect(freed.hits, 'when the oldest hit expires').to.equal(3);
      expect(freed.oldestMs).to.equal(1_030_000);
      // A fixed window would have reset all three slots here; a rolling one frees only one.
      expect((await log.hit('k', MINUTE, 3)).hits).to.equal(4);

      now = 1_030_000 + MINUTE;
      expect((await log.hit('k', MINUTE, 3)).hits).to.equal(2);
    });

    it('does not record refused hits, so calling while limited does not extend the wait', async () => {
      await log.hit('k', MINUTE, 2);
      now += 10_000;
      await log.hit('k', MINUTE, 2);
      for (let i = 0; i < 5; i += 1) {
        now += 5_000;
        expect((await log.hit('k', MINUTE, 2)).hits).to.equal(3);
      }
      now = 1_000_000 + MINUTE;
      const next = await log.hit('k', MINUTE, 2);
      expect(next.hits).to.equal(2);
      expect(next.oldestMs).to.equal(1_010_000);
    });

    it('keeps separate logs per key', async () => {
      await log.hit('a', MINUTE, 1);
      expect((await log.hit('a', MINUTE, 1)).hits).to.equal(2);
      expect((await log.hit('b', MINUTE, 1)).hits).to.equal(1);
    });
  });

  describe('through the app (limit 5 per key, 3 failed authentications per IP)', () => {
    let app: Express;
    beforeEach(() => {
      app = limitedApp();
    });

    it('answers the 6th request of a key with 429, Retry-After and the RateLimit headers', async () => {
      const { key } = await buildTenant();
      const first = await rest(app, key);
      expect(first.status).to.equal(404);
      expect(rateLimitFields(first.headers.ratelimit)).to.include({ r: '4', t: '60' });
      expect(await times(4, () => rest(app, key))).to.deep.equal([404, 404, 404, 404]);

      const sixth = await rest(app, key);
      expectRateLimited(sixth);
      expect(sixth.body).to.deep.include({ error: 'Rate limit exceeded' });
      expect(sixth.headers.ratelimit).to.match(/^"api-key"; /).and.include('r=0').and.include('t=');
      expect(sixth.headers['ratelimit-policy']).to.match(/^"api-key"; /).and.include('q=5').and.include('w=60');
    });

    it('sends RateLimit and RateLimit-Policy on every keyed response, successes and errors alike', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const responses = [
        await request(app).get(`/api/v1/contacts/${contact.id}`).set('x-api-key', key),
        await rest(app, key),
        await request(app).post('/api/v1/contacts').set('x-api-key', key).send({ email: 'not an email' }),
        await trpc(app, key),
      ];
      expect(responses.map((res) => res.status)).to.deep.equal([200, 404, 400, 404]);
      responses.forEach((res, i) => {
        expect(res.headers.ratelimit, `response ${i}`).to.match(/^"api-key"; r=\d+; t=\d+$/);
        expect(res.headers['ratelimit-policy'], `response ${i}`).to.match(/^"api-key"; q=5; w=60(; |$)/);
      });
      expect(responses.map((res) => rateLimitFields(res.headers.ratelimit).r)).to.deep.equal(['4', '3', '2', '1']);
    });

    it('counts REST and tRPC requests against one budget per key', async () => {
      const { key } = await buildTenant();
      expect(await times(3, () => rest(app, key))).to.deep.equal([404, 404, 404]);
      expect(await times(2, () => trpc(app, key))).to.deep.equal([404, 404]);
      expectRateLimited(await trpc(app, key));
      expectRateLimited(await rest(app, key));
    });

    it('answers a limited tRPC call in tRPC\'s error envelope', async () => {
      const { key } = await buildTenant();
      await times(PER_KEY, () => rest(app, key));
      const single = await trpc(app, key);
      expectRateLimited(single);
      expect(single.body).to.deep.equal({
        error: {
          code: -32029,
          message: 'Rate limit exceeded',
          data: {
            code: 'TOO_MANY_REQUESTS',
            appCode: 'rate_limited',
            httpStatus: 429,
            path: 'contacts.getByEmail',
            requestId: single.headers['x-request-id'],
            details: null,
          },
        },
      });
    });

    it('refuses batched tRPC calls, so that one request is one call against the limit', async () => {
      const { key } = await buildTenant();
      const input = encodeURIComponent(JSON.stringify({ 0: { email: 'a@example.com' }, 1: { email: 'b@example.com' } }));
      const batch = await request(app).get(`/trpc/contacts.getByEmail,contacts.getByEmail?batch=1&input=${input}`).set('x-api-key', key);
      expect(batch.status).to.equal(400);
      expect(JSON.parse(batch.text).error.message).to.equal('Batching is not enabled on the server');
      expect(batch.headers.ratelimit).to.match(new RegExp(`r=${PER_KEY - 1}\\b`));
    });

    it('gives two accounts\' keys separate budgets', async () => {
      const a = await buildTenant();
      const b = await buildTenant();
      await times(PER_KEY, () => rest(app, a.key));
      expectRateLimited(await rest(app, a.key));
      const res = await rest(app, b.key);
      expect(res.status).to.equal(404);
      expect(rateLimitFields(res.headers.ratelimit).r).to.equal('4');
    });

    it('counts per key, so two keys of one account have separate budgets', async () => {
      const { key, accountId } = await buildTenant();
      const second = await buildApiKey(accountId, { name: 'second integration' });
      await times(PER_KEY, () => rest(app, key));
      expectRateLimited(await rest(app, key));
      expect(await times(PER_KEY, () => rest(app, second.key))).to.deep.equal([404, 404, 404, 404, 404]);
      expectRateLimited(await rest(app, second.key));
    });

    it('counts the Retry-After from the oldest request in the window (rolling minute)', async () => {
      let offset = -30_000;
      const rolling = limitedApp(new MemorySlidingLog(MINUTE, () => Date.now() + offset));
      const { key } = await buildTenant();
      expect((await rest(rolling, key)).status).to.equal(404); // 30 s ago
      offset = 0;
      expect(await times(PER_KEY - 1, () => rest(rolling, key))).to.deep.equal([404, 404, 404, 404]);
      const limited = await rest(rolling, key);
      expectRateLimited(limited);
      expect(Number(limited.headers['retry-after'])).to.be.within(29, 31);

      offset = 30_000; // the first request has left the window: exactly one slot is free
      const freed = await rest(rolling, key);
      expect(freed.status).to.equal(404);
      expect(rateLimitFields(freed.headers.ratelimit).r).to.equal('0');
      expectRateLimited(await rest(rolling, key));
    });

    it('limits requests with a bad key per client IP: the 4th is answered 429', async () => {
      const bad = `svc_${'0'.repeat(40)}`;
      const statuses = [
        (await rest(app, bad)).status,
        (await rest(app)).status,
        (await request(app).get('/trpc/contacts.get?input=%7B%7D').set('x-api-key', 'nonsense')).status,
      ];
      expect(statuses).to.deep.equal([401, 401, 401]);
      expectRateLimited(await rest(app, bad));
      expectRateLimited(await rest(app, `svc_${'1'.repeat(40)}`)); // a fresh guess gets no fresh budget
    });

    it('limits requests with a disabled key as failed authentication', async () => {
      const { accountId } = await buildTenant();
      const disabled = await buildApiKey(accountId, { active: false });
      expect(await times(PER_IP_FAILED_AUTH, () => rest(app, disabled.key))).to.deep.equal([401, 401, 401]);
      expectRateLimited(await rest(app, disabled.key));
    });

    it('does not charge failed authentications to a valid key\'s budget, nor block it', async () => {
      const { key } = await buildTenant();
      await times(PER_IP_FAILED_AUTH + 2, () => rest(app, `svc_${'2'.repeat(40)}`));
      const first = await rest(app, key);
      expect(first.status).to.equal(404);
      expect(rateLimitFields(first.headers.ratelimit).r).to.equal('4');
      expect(await times(PER_KEY - 1, () => rest(app, key))).to.deep.equal([404, 404, 404, 404]);
    });

    it('checks the rate limit after authentication: a bad key never gets a key\'s RateLimit headers', async () => {
      const { key } = await buildTenant();
      await times(PER_KEY, () => rest(app, key));
      expectRateLimited(await rest(app, key));

      // The key's budget is spent, but a request with a bad key is judged as failed auth.
      const bad = await rest(app, `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`);
      expect(bad.status).to.equal(401);
      expect(bad.body).to.deep.include({ error: 'Invalid API key' });
      expect(bad.headers.ratelimit ?? '').to.not.include('api-key');
      expect(bad.headers['ratelimit-policy']).to.match(/^"failed-auth"; q=3; w=60/);
      expect(rateLimitFields(bad.headers.ratelimit).r).to.equal('2');
    });

    it('answers 503 with Retry-After, never a pass or a 500, when the rate-limit store fails', async () => {
      const failing = new RedisSlidingLog({ sendCommand: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1')) });
      const broken = limitedApp(failing);
      const { key } = await buildTenant();
      for (const res of [await rest(broken, key), await trpc(broken, key)]) {
        expectUnavailable(res);
        expect(res.text).to.not.include('ECONNREFUSED');
      }
    });
  });

  const url = process.env.TEST_REDIS_URL;
  const redisTitle = url
    ? 'shared through Redis'
    : 'shared through Redis (skipped: TEST_REDIS_URL is not set; CI sets it, locally run bash scripts/ci/start-redis.sh)';
  describe(redisTitle, function () {
    type Client = Awaited<ReturnType<typeof connectRedis>>;
    const clients: Client[] = [];
    const connect = async (target: string) => {
      const client = await connectRedis(target, silentLogger);
      clients.push(client);
      return client;
    };

    before(function () {
      if (!url) this.skip();
    });
    afterEach(() => {
      for (const client of clients.splice(0)) client.destroy();
    });

    it('shares one key\'s budget between two instances of the service', async () => {
      const appA = limitedApp(new RedisSlidingLog(await connect(url!)));
      const appB = limitedApp(new RedisSlidingLog(await connect(url!)));
      // A fresh key (UUID id) per test: no other run's counters can interfere, nothing is flushed.
      const { key, keyId } = await buildTenant();

      expect(await times(3, () => rest(appA, key))).to.deep.equal([404, 404, 404]);
      const onB = await trpc(appB, key);
      expect(onB.status).to.equal(404);
      expect(rateLimitFields(onB.headers.ratelimit).r, 'B sees the hits made on A').to.equal('1');
      expect((await rest(appB, key)).status).to.equal(404);

      expectRateLimited(await rest(appA, key));
      expectRateLimited(await trpc(appB, key));

      // Refused hits are not stored, and the log expires with its window.
      const [observer] = clients;
      expect(Number(await observer.sendCommand(['ZCARD', `rl:key:${keyId}`]))).to.equal(PER_KEY);
      const ttl = Number(await observer.sendCommand(['PTTL', `rl:key:${keyId}`]));
      expect(ttl).to.be.greaterThan(0).and.at.most(MINUTE);
    });

    it('keeps separate budgets per key in Redis', async () => {
      const appA = limitedApp(new RedisSlidingLog(await connect(url!)));
      const a = await buildTenant();
      const b = await buildTenant();
      await times(PER_KEY, () => rest(appA, a.key));
      expectRateLimited(await rest(appA, a.key));
      expect((await rest(appA, b.key)).status).to.equal(404);
    });

    describe('when Redis becomes unreachable', () => {
      let server: ChildProcess | undefined;
      afterEach(async () => {
        if (server && server.exitCode === null) {
          const exited = new Promise((resolve) => server!.once('exit', resolve));
          server.kill();
          await exited;
        }
        server = undefined;
      });

      it('answers keyed requests 503 with Retry-After, never 500 and never a pass', async function () {
        if (spawnSync('redis-server', ['--version']).error) {
          if (process.env.CI) throw new Error('redis-server is not installed (scripts/ci/start-redis.sh installs it)');
          this.test!.title += ' (skipped: no redis-server binary here to start a throwaway server with)';
          this.skip();
        }
        const port = await freePort();
        server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
          stdio: 'ignore',
        });
        await waitForPong(port);
        const client = await connect(`redis://127.0.0.1:${port}`);
        const app = limitedApp(new RedisSlidingLog(client));
        const { key } = await buildTenant();
        expect((await rest(app, key)).status, 'while Redis is up').to.equal(404);

        const exited = new Promise((resolve) => server!.once('exit', resolve));
        spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'shutdown', 'nosave']);
        await exited;

        for (const res of [await rest(app, key), await rest(app, key), await trpc(app, key)]) expectUnavailable(res);
      });
    });
  });
});

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// redis-server needs a moment to listen after it is spawned.
async function waitForPong(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const ping = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8' });
    if (ping.stdout?.trim() === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the throwaway redis-server on port ${port} did not answer PONG within 10 s`);
}
