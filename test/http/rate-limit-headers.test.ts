import { expect } from 'chai';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import request from 'supertest';
import { draft8Headers } from '../../src/http/rate-limit/draft8-headers';

// The project writes the draft-8 headers itself (to hash each key once, not on every
// response); what a client reads must stay exactly what express-rate-limit 8 writes.

const MINUTE = 60_000;
const LIMIT = 2;

function stockApp() {
  const app = express();
  app.use(
    rateLimit({
      windowMs: MINUTE,
      limit: LIMIT,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      identifier: 'api-key',
      keyGenerator: (req) => String(req.headers['x-key']),
    }),
  );
  app.get('/', (_req, res) => void res.send('ok'));
  return app;
}

function projectApp() {
  const headers = draft8Headers({ property: 'rateLimit', name: 'api-key', windowMs: MINUTE });
  const app = express();
  app.use(
    rateLimit({
      windowMs: MINUTE,
      limit: LIMIT,
      standardHeaders: false,
      legacyHeaders: false,
      identifier: 'api-key',
      keyGenerator: (req) => String(req.headers['x-key']),
      handler: (req, res) => {
        headers.refused(req, res);
        res.status(429).send('limited');
      },
    }),
    headers.middleware,
  );
  app.get('/', (_req, res) => void res.send('ok'));
  return app;
}

const HEADERS = ['ratelimit', 'ratelimit-policy', 'retry-after'];

async function headersOf(app: express.Express, key: string, count: number) {
  const seen: Array<Record<string, unknown>> = [];
  for (let i = 0; i < count; i += 1) {
    const res = await request(app).get('/').set('x-key', key);
    seen.push({ status: res.status, ...Object.fromEntries(HEADERS.map((h) => [h, res.headers[h]])) });
  }
  return seen;
}

describe('RateLimit headers without a per-response key hash', () => {
  it('writes RateLimit, RateLimit-Policy (with pk) and Retry-After exactly as express-rate-limit does', async () => {
    for (const key of ['key-a', 'key-b']) {
      const stock = await headersOf(stockApp(), key, LIMIT + 1);
      const ours = await headersOf(projectApp(), key, LIMIT + 1);
      expect(ours).to.deep.equal(stock);
      expect(ours.map((h) => h.status)).to.deep.equal([200, 200, 429]);
      expect(ours[0]['ratelimit-policy']).to.match(/^"api-key"; q=2; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      expect(ours[2]['retry-after']).to.match(/^\d+$/);
    }
  });
});
