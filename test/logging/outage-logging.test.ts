import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { expect } from 'chai';
import { ConnectionRefusedError } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app';
import { connectRedis } from '../../src/http/rate-limit/redis-client';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { LogThrottle } from '../../src/logging/log-throttle';
import { testDb, withFailingStatements } from '../support/db';
import { buildTenant } from '../support/factories';
import { bufferLogger } from '../support/log-buffer';

// During an outage every request fails the same way. Measured before: an 8 s Redis outage
// wrote 3,602 lines, a database outage one line per 503. Now: one line per cause per 10 s,
// the next one saying how many were left out; the access log still has every request.

const refused = () => new ConnectionRefusedError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));

describe('logging during an outage', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 5_000_000;
  });

  function outageApp(rateLimitLog?: RedisSlidingLog) {
    const log = bufferLogger('info');
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000, authFailureLimitPerMinute: 1_000 },
      logger: log.logger,
      rateLimitLog,
      logThrottle: new LogThrottle(10_000, clock),
    });
    return { app, log };
  }

  it('logs a database outage once per 10 s, over REST, tRPC and readiness alike, and then the count', async () => {
    const { app, log } = outageApp();
    const { key } = await buildTenant();
    const send = (i: number) => {
      if (i % 3 === 0) return request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', key);
      if (i % 3 === 1) return request(app).post('/trpc/contacts.create').set('x-api-key', key).send({ email: `r${i}@example.com` });
      return request(app).get('/readyz');
    };
    const statuses: number[] = [];
    await withFailingStatements({ scope: 'all', failure: refused }, async () => {
      for (let i = 0; i < 30; i += 1) {
        statuses.push((await send(i)).status);
        now += 300; // 30 requests over 9 s
      }
      now += 1_000;
      statuses.push((await send(0)).status);
    });
    expect(statuses).to.deep.equal(Array(31).fill(503));

    const outageLines = log.records().filter((r) => r.cause === 'database' && r.msg !== 'request completed');
    expect(outageLines.map((r) => r.suppressed)).to.deep.equal([undefined, 29]);
    expect(outageLines[0]).to.have.nested.property('err.message');
    expect(JSON.stringify(outageLines)).to.include('ECONNREFUSED');
    // Every request still has its access-log line, with the cause.
    const access = log.records().filter((r) => r.msg === 'request completed');
    expect(access).to.have.length(31);
    expect(access.every((r) => r.status === 503 && r.cause === 'database')).to.equal(true);
  });

  it('logs a failing rate-limit store (Redis) once per 10 s', async () => {
    const failing = new RedisSlidingLog({ sendCommand: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')) });
    const { app, log } = outageApp(failing);
    const { key } = await buildTenant();
    for (let i = 0; i < 20; i += 1) {
      const res = await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', key);
      expect(res.status).to.equal(503);
      now += 100;
    }
    const errors = log.records().filter((r) => r.level === 'error');
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ cause: 'redis', msg: 'Rate limiting is unavailable: answering 503' });
  });

  it('logs a lost Redis connection once while the client keeps failing to reconnect', async function () {
    this.timeout(20_000);
    if (spawnSync('redis-server', ['--version']).error) {
      if (process.env.CI) throw new Error('redis-server is not installed (scripts/ci/start-redis.sh installs it)');
      this.test!.title += ' (skipped: no redis-server binary here to start a throwaway server with)';
      return this.skip();
    }
    const port = await freePort();
    const server: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => server.once('exit', resolve));
    const log = bufferLogger('info');
    let client: Awaited<ReturnType<typeof connectRedis>> | undefined;
    try {
      await waitForListening(port);
      client = await connectRedis(`redis://127.0.0.1:${port}`, log.logger);
      let errors = 0;
      client.on('error', () => (errors += 1));
      server.kill('SIGKILL');
      await exited;
      // Reconnection attempts at 100, 200, 400, 800 ms...: each one fails with an error event.
      const deadline = Date.now() + 10_000;
      while (errors < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(errors, 'error events from the client').to.be.at.least(4);
      const lines = log.records().filter((r) => r.cause === 'redis');
      expect(lines.map((r) => r.msg)).to.deep.equal(['redis unreachable: rate limits answer 503 until it is back']);
    } finally {
      client?.destroy();
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGKILL');
        await exited;
      }
    }
  });
});

// redis-server needs a moment to listen after it is spawned.
async function waitForListening(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the throwaway redis-server on port ${port} did not listen within 10 s`);
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
