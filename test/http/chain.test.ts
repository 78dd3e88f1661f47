import { expect } from 'chai';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { chain } from '../../src/http/chain';

// chain() runs handlers as one Express layer, with the semantics of separate layers.
describe('chain of handlers', () => {
  const seen: string[] = [];
  const mark =
    (name: string): RequestHandler =>
    (_req, _res, next) => {
      seen.push(name);
      next();
    };
  const app = (...handlers: RequestHandler[]) => {
    const server = express();
    server.use('/mount', chain(handlers));
    server.use((req, res) => void res.status(404).json({ reached: 'not found', url: req.url }));
    const onError: ErrorRequestHandler = (error: Error, _req, res, _next) => void res.status(500).json({ error: error.message });
    server.use(onError);
    return server;
  };

  beforeEach(() => {
    seen.length = 0;
  });

  it('runs each handler in order, with the mount path stripped, until one answers', async () => {
    const answer: RequestHandler = (req, res) => void res.json({ url: req.url, baseUrl: req.baseUrl });
    const res = await request(app(mark('a'), mark('b'), answer, mark('never'))).get('/mount/x?y=1');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ url: '/x?y=1', baseUrl: '/mount' });
    expect(seen).to.deep.equal(['a', 'b']);
  });

  it('goes on to the next layer when every handler calls next()', async () => {
    const res = await request(app(mark('a'), mark('b'))).get('/mount/x');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ reached: 'not found', url: '/mount/x' });
    expect(seen).to.deep.equal(['a', 'b']);
  });

  it('skips to the error handlers on next(error), a throw, or a rejected promise', async () => {
    const passes: RequestHandler = (_req, _res, next) => next(new Error('passed'));
    const throws: RequestHandler = () => {
      throw new Error('thrown');
    };
    const rejects: RequestHandler = async () => {
      throw new Error('rejected');
    };
    for (const [handler, message] of [[passes, 'passed'], [throws, 'thrown'], [rejects, 'rejected']] as const) {
      seen.length = 0;
      const res = await request(app(mark('a'), handler, mark('never'))).get('/mount');
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ error: message });
      expect(seen).to.deep.equal(['a']);
    }
  });
});
