import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { ServiceUnavailableError } from '../../src/errors/app-errors';
import { rebindModelsToTestDb, TEST_DATABASE_URL, testDb } from '../support/db';

// docs/operations.md "Timeouts": on MySQL every statement has DB_QUERY_TIMEOUT_MS (here 500 ms, passed in)
// and past it the service answers 503; a connection cut that way is never handed out again;
// migrations run without the deadline. (A server that stops answering altogether:
// test/http/database-freeze.test.ts.)

const QUERY_TIMEOUT_MS = 500;

async function elapsed<T>(work: () => Promise<T>): Promise<{ outcome: T | unknown; ms: number }> {
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  return { outcome, ms: performance.now() - started };
}

describe('the statement deadline (MySQL)', () => {
  let db: Database | undefined;

  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; an embedded SQLite file cannot stop answering, TEST_DATABASE_URL picks MariaDB)';
      this.skip();
    }
    db = openDatabase(TEST_DATABASE_URL, { timeouts: { acquireTimeoutMs: 1_000, queryTimeoutMs: QUERY_TIMEOUT_MS } });
  });
  afterEach(async () => {
    await db?.close();
    db = undefined;
    rebindModelsToTestDb();
  });

  it('answers a statement still running at the deadline with a 503 error at the deadline', async () => {
    const { outcome, ms } = await elapsed(() => select(db!, 'SELECT SLEEP(3) AS slept', []));
    expect(outcome).to.be.instanceOf(ServiceUnavailableError);
    expect((outcome as ServiceUnavailableError).message).to.equal('Database unavailable; retry shortly');
    expect(ms).to.be.within(QUERY_TIMEOUT_MS - 50, QUERY_TIMEOUT_MS + 500);
  });

  it('never hands out again a connection whose statement was cut, and fails its transaction with a 503', async () => {
    let cut: number | undefined;
    const outcome = await withTransaction(db!, async (transaction) => {
      [{ id: cut }] = await select<{ id: number }>(db!, 'SELECT CONNECTION_ID() AS id', [], transaction);
      await select(db!, 'SELECT SLEEP(3)', [], transaction);
    }).catch((error: unknown) => error);
    expect(outcome).to.be.instanceOf(ServiceUnavailableError);
    expect(cut).to.be.a('number');
    const ids = await Promise.all(Array.from({ length: 10 }, () => select<{ id: number }>(db!, 'SELECT CONNECTION_ID() AS id', [])));
    expect(ids.map(([row]) => row.id)).to.not.include(cut);
  });

  it('lets migrations run statements longer than the deadline', async () => {
    const { outcome, ms } = await elapsed(() => db!.withoutStatementDeadline(() => select(db!, 'SELECT SLEEP(1) AS slept', [])));
    expect(outcome).to.deep.equal([{ slept: 0 }]);
    expect(ms).to.be.at.least(1_000);
  });
});
