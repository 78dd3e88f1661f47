import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { healthRoutes, type Dependency } from '../../src/http/health';
import { LogThrottle } from '../../src/logging/log-throttle';
import { silentLogger } from '../support/app';
import { timed } from '../support/timing';

// docs/operations.md "Health and shutdown": /readyz names what does not answer, and answers within about
// a second whatever the dependencies do (a load balancer's probe would give up otherwise).

const never = () => new Promise<never>(() => undefined);

function readyz(dependencies: Dependency[]) {
  const app = express()
    .use((req, _res, next) => {
      req.log = silentLogger; // the access log's per-request logger, in the app
      next();
    })
    .use(healthRoutes(dependencies, new LogThrottle()));
  return request(app).get('/readyz');
}

describe('GET /readyz', () => {
  it('answers 200 {status: "ready"} when every dependency answers', async () => {
    const res = await readyz([
      { name: 'Database', check: async () => 1 },
      { name: 'Redis', check: async () => 'PONG' },
    ]);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ready' });
  });

  it('answers 503 within about a second naming each dependency that fails or never answers', async () => {
    const { res, ms } = await timed(
      readyz([
        { name: 'Database', check: never },
        { name: 'Redis', check: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:6379')) },
      ]),
    );
    expect(res.status).to.equal(503);
    expect(res.body).to.deep.equal({ error: 'Database and Redis unreachable' });
    expect(ms).to.be.within(950, 1_600);
  });

  it('names only the dependency that does not answer', async () => {
    const res = await readyz([
      { name: 'Database', check: async () => 1 },
      { name: 'Redis', check: () => Promise.reject(new Error('Redis has not answered since a command timed out')) },
    ]);
    expect(res.status).to.equal(503);
    expect(res.body).to.deep.equal({ error: 'Redis unreachable' });
  });
});
