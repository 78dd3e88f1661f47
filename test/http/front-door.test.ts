import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { silentLogger } from '../support/app';
import { testDb } from '../support/db';

// GET / is where a newcomer lands first: a browser goes on to the dashboard, any other client
// gets the map of the service (docs/api.md), and neither needs a key.

const CHROME_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const INDEX = { api: '/api/v1', docs: '/docs', dashboard: '/dashboard', openapi: '/api/v1/openapi.json' };

describe('GET /', () => {
  let dashboardDir: string;
  let app: Express;

  before(() => {
    dashboardDir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-door-'));
    fs.writeFileSync(path.join(dashboardDir, 'index.html'), '<!doctype html><div id="root"></div>');
    app = createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000 }, logger: silentLogger, dashboardDir });
  });
  after(() => fs.rmSync(dashboardDir, { recursive: true, force: true }));

  it('redirects a browser to the dashboard, which is there', async () => {
    for (const accept of [CHROME_ACCEPT, 'text/html']) {
      const res = await request(app).get('/').set('accept', accept);
      expect(res.status, accept).to.equal(302);
      expect(res.headers.location, accept).to.equal('/dashboard');
      expect(res.headers.vary, accept).to.match(/\bAccept\b/);
    }
    const dashboard = await request(app).get('/dashboard').set('accept', CHROME_ACCEPT);
    expect(dashboard.status).to.equal(200);
    expect(dashboard.text).to.include('<div id="root"></div>');
  });

  it('answers any other client with the index of the service, without a key', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
      const test = request(app).get('/');
      const res = await (accept ? test.set('accept', accept) : test);
      expect(res.status, String(accept)).to.equal(200);
      expect(res.headers['content-type'], String(accept)).to.match(/^application\/json/);
      expect(res.headers.vary, String(accept)).to.match(/\bAccept\b/);
      expect(res.body, String(accept)).to.deep.equal(INDEX);
    }
  });

  it('names places that answer', async () => {
    expect((await request(app).get(INDEX.openapi)).status).to.equal(200);
    expect((await request(app).get(INDEX.docs).redirects(1)).status).to.equal(200);
    expect((await request(app).get(INDEX.dashboard)).status).to.equal(200);
    // The API's base asks for a key: it is there, not a 404.
    const api = await request(app).get(`${INDEX.api}/contacts`);
    expect(api.status).to.equal(401);
    expect(api.body.code).to.equal('missing_api_key');
  });

  it('answers HEAD as GET, and still 404s other methods on /', async () => {
    expect((await request(app).head('/').set('accept', 'text/html')).status).to.equal(302);
    expect((await request(app).head('/')).status).to.equal(200);
    const post = await request(app).post('/').send({});
    expect(post.status).to.equal(404);
    expect(post.body.code).to.equal('not_found');
  });
});
