import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { openDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { createAccount } from '../../src/services/accounts';
import { createApiKey } from '../../src/services/api-keys';
import { silentLogger } from '../support/app';
import { rebindModelsToTestDb } from '../support/db';
import { mariadbMissing, startMariadb, type ThrowawayServer } from '../support/throwaway-servers';
import { sleep, timed } from '../support/timing';

// docs/operations.md "Timeouts": a MariaDB that keeps its connections open and never answers (SIGSTOP)
// costs a request at most a few seconds: 503 "Database unavailable; retry shortly" with
// Retry-After, for a request caught mid-transaction as for one that arrives meanwhile, and
// /readyz says so within 2 s. When it wakes, the service serves again by itself, and the
// transaction that was cut left nothing behind. Production's timeouts (3 s + 3 s).

const missing = mariadbMissing();
const TITLE = missing
  ? `a frozen MariaDB (skipped: ${missing})`
  : 'a frozen MariaDB (SIGSTOP: connections open, never answering)';
const UNAVAILABLE = { error: 'Database unavailable; retry shortly', code: 'service_unavailable' };
const BOUND_MS = 5_000;
const READY_BOUND_MS = 2_000;

describe(TITLE, function () {
  this.timeout(60_000);
  let mariadb: ThrowawayServer | undefined;
  let db: Database | undefined;
  let app: Express;
  let key: string;
  let freezeOnInsert: (() => void) | undefined;

  before(async function () {
    if (missing) {
      if (process.env.CI) throw new Error(missing);
      this.skip();
    }
    this.timeout(120_000);
    mariadb = await startMariadb();
    db = openDatabase(mariadb.url, {
      // Freezes the server between a transaction's first statements and its INSERT, so that
      // the request is caught mid-transaction, holding a connection.
      onQuery: (sql) => {
        if (freezeOnInsert && /INSERT INTO contacts/.test(sql)) {
          freezeOnInsert();
          freezeOnInsert = undefined;
        }
      },
    });
    await migrateToLatest(db);
    const account = await createAccount(db, { name: 'Frozen' });
    ({ key } = await createApiKey(db, { accountId: account.id, name: 'freeze test' }));
    app = createApp({ db, config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger });
  });
  // Even when a test fails half-way: nothing may stay frozen.
  afterEach(() => mariadb?.resume());
  after(async () => {
    await db?.close();
    // Opening a database binds the models to it: back to the test database.
    rebindModelsToTestDb();
    await mariadb?.stop();
  });

  const api = () => ({
    get: (path: string) => request(app).get(`/api/v1${path}`).set('x-api-key', key),
    post: (path: string) => request(app).post(`/api/v1${path}`).set('x-api-key', key),
  });
  const read = () => api().get('/contacts/by-email/nobody%40example.com');

  it('answers 503 with Retry-After within 5 s, /readyz 503 within 2 s, and serves again after SIGCONT without a restart', async () => {
    // Connections in the pool before the freeze, as on a server that has been serving.
    expect((await Promise.all([read(), read(), read(), read()])).map((res) => res.status)).to.deep.equal([404, 404, 404, 404]);

    const frozen = new Promise<void>((resolve) => {
      freezeOnInsert = () => {
        mariadb!.freeze();
        resolve();
      };
    });
    const write = timed(api().post('/contacts').send({ email: 'cut-short@example.com' }));
    await frozen;
    // Arriving meanwhile: more requests than idle connections, so that some wait for new ones.
    const [reads, ready] = await Promise.all([Promise.all(Array.from({ length: 6 }, () => timed(read()))), timed(request(app).get('/readyz'))]);
    const during = [await write, ...reads];

    for (const { res } of during) {
      expect(res.status, res.text).to.equal(503);
      expect(res.headers['retry-after']).to.equal('5');
      expect(res.body).to.deep.include(UNAVAILABLE);
    }
    const longest = Math.max(...during.map(({ ms }) => ms));
    expect(longest, 'longest response while frozen (ms)').to.be.below(BOUND_MS);
    expect(ready.res.status).to.equal(503);
    expect(ready.res.body).to.deep.include({ error: 'Database unreachable' });
    expect(ready.ms, '/readyz while frozen (ms)').to.be.below(READY_BOUND_MS);

    mariadb!.resume();
    const recovered = await firstAnswer(read, 10_000);
    expect(recovered.status, recovered.text).to.equal(404);
    expect((await request(app).get('/readyz')).body).to.deep.equal({ status: 'ready' });
    // The transaction cut mid-way was rolled back, and holds no lock on its email.
    expect((await api().get('/contacts/by-email/cut-short%40example.com')).status).to.equal(404);
    const again = await api().post('/contacts').send({ email: 'cut-short@example.com' });
    expect(again.status, again.text).to.equal(201);
  });
});

async function firstAnswer(send: () => request.Test, withinMs: number): Promise<request.Response> {
  const until = Date.now() + withinMs;
  for (;;) {
    const res = await send();
    if (res.status !== 503 || Date.now() > until) return res;
    await sleep(100);
  }
}
