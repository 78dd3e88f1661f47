import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { accessLog } from '../../src/http/access-log';
import { bufferLogger } from '../support/log-buffer';

// Lines written through req.log while serving a request carry its id, and are redacted.

function appWith(handler: express.RequestHandler) {
  const log = bufferLogger('info');
  const app = express();
  app.use(accessLog(app, log.logger, () => '/route'));
  app.get('/route', handler);
  return { app, log };
}

describe('the request logger', () => {
  it('puts the request id on lines written through req.log', async () => {
    const { app, log } = appWith((req, res) => {
      req.log.warn({ step: 1 }, 'through req.log');
      req.log.warn({ step: 2 }, 'again');
      res.json({ ok: true });
    });
    await request(app).get('/route').set('x-request-id', 'req-77');
    expect(log.records().map((r) => [r.msg, r.reqId, r.step ?? null])).to.deep.equal([
      ['through req.log', 'req-77', 1],
      ['again', 'req-77', 2],
      ['request completed', 'req-77', null],
    ]);
  });

  it('still redacts secrets on a request\'s own lines', async () => {
    const { app, log } = appWith((req, res) => {
      req.log.error({ apiKey: 'svc_secret', nested: { key: 'svc_secret' } }, 'failed');
      res.status(500).json({ error: 'Internal server error' });
    });
    await request(app).get('/route');
    expect(log.text()).to.not.include('svc_secret');
    expect(log.records().map((r) => [r.msg, r.level])).to.deep.equal([
      ['failed', 'error'],
      ['request completed', 'error'],
    ]);
  });
});
