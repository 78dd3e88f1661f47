import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import type { Database } from '../../src/db/database';
import { restApi } from '../../src/http/rest-api';
import { LogThrottle } from '../../src/logging/log-throttle';
import type { AppRouter } from '../../src/routers/app-router';
import { publicProcedure, router } from '../../src/trpc/init';
import { silentLogger } from '../support/app';

// The REST adapter's input rules, on procedures shaped to show them (the API has no GET
// parameter taking an array, and no number or boolean outside a list's limit): what reaches a
// procedure from the path, the query and the body, and what a request that matches nothing
// gets. The API's own suites cover the same rules on the real procedures.

const echo = <T>(input: T) => ({ input });
const echoed = z.object({ input: z.unknown() });

const testRouter = router({
  find: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/things/{name}' } })
    .input(z.object({ name: z.string(), tags: z.array(z.string()).optional(), count: z.number().optional(), on: z.boolean().optional() }))
    .output(echoed)
    .query(({ input }) => echo(input)),
  only: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/only' } })
    .input(z.object({ ids: z.array(z.string()) }))
    .output(echoed)
    .query(({ input }) => echo(input)),
  untag: publicProcedure
    .meta({ openapi: { method: 'DELETE', path: '/things/{name}/tags' } })
    .input(z.object({ name: z.string(), tags: z.array(z.string()).optional(), note: z.string().optional() }))
    .output(echoed)
    .mutation(({ input }) => echo(input)),
  rename: publicProcedure
    .meta({ openapi: { method: 'PUT', path: '/things/{name}' }, successStatus: 202 })
    .input(z.object({ name: z.string(), to: z.string() }))
    .output(echoed)
    .mutation(({ input }) => echo(input)),
});

function app() {
  const server = express();
  server.use(express.json(), (req, _res, next) => {
    req.id = 'req-1';
    req.log = silentLogger;
    next();
  });
  server.use(restApi({ router: testRouter as unknown as AppRouter, db: {} as Database, logThrottle: new LogThrottle() }));
  server.use((_req, res) => void res.status(404).json({ fellThrough: true }));
  return server;
}

describe('REST adapter input', () => {
  it('gives a percent-decoded path parameter, query numbers and booleans coerced, one value of an array field as an array', async () => {
    const res = await request(app()).get('/things/a%2Bb%40x.io?tags=vip&count=5&on=true');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.input).to.deep.equal({ name: 'a+b@x.io', tags: ['vip'], count: 5, on: true });
  });

  it('keeps repeated query values as an array and leaves out empty ones', async () => {
    const res = await request(app()).get('/only?ids=a&ids=b&unused=');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.input).to.deep.equal({ ids: ['a', 'b'] });
  });

  it('lets the path parameter win over a query field of the same name', async () => {
    const res = await request(app()).get('/things/real?name=other');
    expect(res.body.input).to.deep.equal({ name: 'real' });
  });

  it('reads a DELETE body when it is an object, ignoring the query, and the query otherwise', async () => {
    const withBody = await request(app()).delete('/things/x%20y/tags?note=from-query').send({ tags: ['a'], name: 'ignored' });
    expect(withBody.status, withBody.text).to.equal(200);
    expect(withBody.body.input).to.deep.equal({ name: 'x y', tags: ['a'] });
    const withQuery = await request(app()).delete('/things/x/tags?note=from-query&tags=b');
    expect(withQuery.body.input).to.deep.equal({ name: 'x', note: 'from-query', tags: ['b'] });
  });

  it('answers a success with the status of the meta, and a body field never replaces the path parameter', async () => {
    const res = await request(app()).put('/things/real').send({ name: 'other', to: 'new' });
    expect(res.status, res.text).to.equal(202);
    expect(res.headers['content-type']).to.equal('application/json');
    expect(res.body.input).to.deep.equal({ name: 'real', to: 'new' });
  });

  it('answers 415 to a body that is not JSON, with the error body and the request id', async () => {
    const res = await request(app()).put('/things/real').type('form').send('to=new');
    expect(res.status).to.equal(415);
    expect(res.body).to.deep.equal({ error: 'Content-Type must be application/json', code: 'unsupported_media_type', requestId: 'req-1' });
  });

  it('answers 400 with details when the input does not validate', async () => {
    const res = await request(app()).get('/things/x?count=many');
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'validation_failed', requestId: 'req-1' });
    expect(res.body.details[0].path).to.equal('count');
  });

  it('passes an unknown path on to what follows', async () => {
    const res = await request(app()).get('/nothing/here');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ fellThrough: true });
  });

  it('answers 405 with Allow to a known path with another method', async () => {
    const res = await request(app()).post('/only').send({});
    expect(res.status).to.equal(405);
    expect(res.headers.allow).to.equal('GET');
    expect(res.body).to.include({ code: 'method_not_allowed' });
  });
});
