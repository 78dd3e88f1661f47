import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { countAccounts } from '../../src/services/accounts';
import { TEST_DATABASE_URL, testDb } from '../support/db';
import { spawnServer, startServer } from '../support/server-process';

// The real entry point (dist/server.js) in a child process, as `npm start` runs it.

describe('the server process', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates a demo key on the first start that works at once, and not on the next start', async () => {
    const url = `sqlite:${path.join(dir, 'first.sqlite')}`;
    const first = await startServer(url);
    try {
      const key = /API key:\s+(svc_[0-9a-f]{40})/.exec(first.stdout())?.[1];
      const sequence = /sequence:\s+([0-9a-f-]{36}) \(active\)/.exec(first.stdout())?.[1];
      expect(key, first.stdout()).to.be.a('string');
      expect(first.stdout()).to.include(`curl -s -X POST http://localhost:${first.port}/api/v1/contacts/upsert`);
      const base = `http://127.0.0.1:${first.port}/api/v1`;
      const headers = { 'x-api-key': key!, 'content-type': 'application/json' };
      const upsert = await fetch(`${base}/contacts/upsert`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ email: 'first@example.com' }),
      });
      expect(upsert.status).to.equal(201);
      const trigger = await fetch(`${base}/sequences/${sequence}/trigger`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ contact: { email: 'first@example.com' } }),
      });
      expect(trigger.status).to.equal(202);
      const { enrolled, runId } = await trigger.json();
      expect(enrolled).to.equal(true);
      // The engine is on: the demo sequence's run starts its wait at once, unprompted.
      let run: { status: string; currentStepId: string; executions: Array<{ stepId: string; status: string }> } | undefined;
      for (const started = Date.now(); Date.now() - started < 15_000; await new Promise((resolve) => setTimeout(resolve, 100))) {
        run = (await (await fetch(`${base}/sequences/${sequence}/runs/${runId}`, { headers })).json()).run;
        if (run?.status === 'running') break;
      }
      expect(run).to.deep.include({ status: 'running', currentStepId: 'welcome-wait' });
      expect(run!.executions).to.deep.equal([{ ...run!.executions[0], stepId: 'welcome-wait', status: 'running' }]);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    const second = await startServer(url);
    try {
      expect(second.stdout()).not.to.include('API key:');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('serves concurrent writes on the embedded file database: one contact, one run, no 500', async () => {
    const server = await startServer(`sqlite:${path.join(dir, 'concurrent.sqlite')}`);
    try {
      const key = /API key:\s+(svc_[0-9a-f]{40})/.exec(server.stdout())![1];
      const sequence = /sequence:\s+([0-9a-f-]{36}) \(active\)/.exec(server.stdout())![1];
      const base = `http://127.0.0.1:${server.port}/api/v1`;
      const post = (route: string, body: unknown) =>
        fetch(`${base}${route}`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const responses = await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => post('/contacts/upsert', { email: 'race@example.com', customFields: { [`k${i}`]: i } })),
        ...Array.from({ length: 20 }, () => post(`/sequences/${sequence}/trigger`, { contact: { email: 'race@example.com' } })),
        ...Array.from({ length: 10 }, (_, i) => post('/contacts/batch', { contacts: [{ email: `b${i}@example.com` }, { email: 'race@example.com' }] })),
      ]);
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s >= 500)).to.deep.equal([]);
      const triggers = await Promise.all(responses.slice(20, 40).map((r) => r.json()));
      expect(triggers.filter((t) => t.enrolled === true)).to.have.length(1);
      const contact = await (await fetch(`${base}/contacts/by-email/race%40example.com`, { headers: { 'x-api-key': key } })).json();
      expect(Object.keys(contact.contact.customFields)).to.have.length(20);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('refuses to start, saying why, when REDIS_URL is set but Redis does not answer', async () => {
    // Port 1 on loopback: nothing listens there.
    const child = spawnServer(`sqlite:${path.join(dir, 'redis.sqlite')}`, { REDIS_URL: 'redis://127.0.0.1:1' });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include('REDIS_URL is set but Redis did not answer');
    expect(stderr).not.to.include('"msg":"listening"');
  });

  it('creates no key on a server database: the first start prints the CLI steps instead', async function () {
    if (!TEST_DATABASE_URL.startsWith('mysql://')) {
      return this.skip(); // the embedded database gets the demo key (tested above); TEST_DATABASE_URL picks MariaDB
    }
    // The root hook emptied the test database: no accounts.
    const server = await startServer(TEST_DATABASE_URL);
    try {
      expect(server.stdout()).to.include('The database has no accounts yet');
      expect(server.stdout()).to.include('npm run -s cli -- account:create');
      expect(server.stdout()).not.to.match(/svc_[0-9a-f]{40}/);
      expect(await countAccounts(testDb())).to.equal(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('finishes in-flight requests on SIGTERM, then exits 0 and refuses new connections', async () => {
    const server = await startServer(`sqlite:${path.join(dir, 'drain.sqlite')}`);
    const key = /API key:\s+(svc_[0-9a-f]{40})/.exec(server.stdout())![1];
    const base = `http://127.0.0.1:${server.port}/api/v1`;
    const contacts = Array.from({ length: 100 }, (_, i) => ({ email: `drain-${i}@example.com`, customFields: { i } }));
    const inFlight = fetch(`${base}/contacts/batch`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ contacts }),
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    server.child.kill('SIGTERM');
    const response = await inFlight;
    expect(response.status).to.equal(201);
    expect((await response.json()).summary).to.deep.equal({ total: 100, inserted: 100, updated: 0 });
    expect(await server.exited).to.equal(0);
    let refused = false;
    await fetch(`${base}/contacts`, { headers: { 'x-api-key': key } }).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });
});
