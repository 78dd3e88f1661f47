import { expect } from 'chai';
import { ConnectionError } from 'sequelize';
import type { Database } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { ServiceUnavailableError } from '../../src/errors/app-errors';
import { testDb } from '../support/db';
import { buildAccount } from '../support/factories';

// withTransaction, the one way the service writes: on MySQL a deadlock re-runs the whole
// function and nothing else is retried; on SQLite transactions queue one at a time; a lost
// connection, a deadlock that outlives its retries and a lock-wait timeout become a
// ServiceUnavailableError (503). Mostly against fake databases, so each
// rule is checked on its own, whatever the test database is.

type TransactionFn = (transaction: unknown) => Promise<unknown>;

function fakeDatabase(dialect: 'mysql' | 'sqlite', transaction: (fn: TransactionFn) => Promise<unknown> = (fn) => fn({})) {
  return { dialect, sequelize: { transaction } } as unknown as Database;
}

function mysqlError(errno: number, message: string) {
  return Object.assign(new Error(message), { parent: Object.assign(new Error(message), { errno }) });
}

const deadlock = () => mysqlError(1213, 'Deadlock found when trying to get lock; try restarting transaction');

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.fail('expected a rejection');
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('withTransaction', () => {
  describe('on MySQL', () => {
    it('re-runs the whole function after a deadlock and returns the later attempt\'s result', async () => {
      const steps: string[] = [];
      let attempt = 0;
      const db = fakeDatabase('mysql');
      const result = await withTransaction(db, async () => {
        attempt += 1;
        steps.push(`start ${attempt}`);
        if (attempt < 3) throw deadlock();
        steps.push(`end ${attempt}`);
        return `result of attempt ${attempt}`;
      });
      expect(result).to.equal('result of attempt 3');
      expect(steps).to.deep.equal(['start 1', 'start 2', 'start 3', 'end 3']);
    });

    it('opens a new transaction for every attempt', async () => {
      let opened = 0;
      const db = fakeDatabase('mysql', async (fn) => {
        opened += 1;
        return fn({ attempt: opened });
      });
      let calls = 0;
      const seen = await withTransaction(db, async (transaction) => {
        calls += 1;
        if (calls === 1) throw deadlock();
        return transaction;
      });
      expect(opened).to.equal(2);
      expect(seen).to.deep.equal({ attempt: 2 });
    });

    const NOT_RETRIED: Array<[string, () => Error]> = [
      ['a duplicate key (1062)', () => mysqlError(1062, "Duplicate entry 'x' for key 'y'")],
      ['a plain Error', () => new Error('boom')],
    ];
    for (const [name, make] of NOT_RETRIED) {
      it(`does not retry ${name}: the function runs once and the error comes out unchanged`, async () => {
        const error = make();
        let calls = 0;
        const thrown = await rejection(
          withTransaction(fakeDatabase('mysql'), async () => {
            calls += 1;
            throw error;
          }),
        );
        expect(calls).to.equal(1);
        expect(thrown).to.equal(error);
      });
    }

    function expectBusy(thrown: unknown, cause: unknown) {
      expect(thrown).to.be.instanceOf(ServiceUnavailableError);
      expect((thrown as ServiceUnavailableError).message).to.equal('Database busy; retry shortly');
      expect((thrown as ServiceUnavailableError).status).to.equal(503);
      expect((thrown as ServiceUnavailableError).retryAfterSeconds).to.equal(5);
      expect((thrown as Error).cause).to.equal(cause);
    }

    it('gives up after 5 attempts with ServiceUnavailableError "Database busy", the last deadlock as its cause', async () => {
      let calls = 0;
      const errors: Error[] = [];
      const thrown = await rejection(
        withTransaction(fakeDatabase('mysql'), async () => {
          calls += 1;
          const error = deadlock();
          errors.push(error);
          throw error;
        }),
      );
      expect(calls).to.equal(5);
      expectBusy(thrown, errors[4]);
    });

    it('does not retry a lock-wait timeout (1205), and throws it as ServiceUnavailableError "Database busy"', async () => {
      const timeout = mysqlError(1205, 'Lock wait timeout exceeded; try restarting transaction');
      let calls = 0;
      const thrown = await rejection(
        withTransaction(fakeDatabase('mysql'), async () => {
          calls += 1;
          throw timeout;
        }),
      );
      expect(calls).to.equal(1);
      expectBusy(thrown, timeout);
    });

    it('maps a Sequelize ConnectionError from transaction() to ServiceUnavailableError, without retrying', async () => {
      const lost = new ConnectionError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));
      let opened = 0;
      const db = fakeDatabase('mysql', async () => {
        opened += 1;
        throw lost;
      });
      const thrown = await rejection(withTransaction(db, async () => 'never'));
      expect(thrown).to.be.instanceOf(ServiceUnavailableError);
      expect((thrown as ServiceUnavailableError).message).to.equal('Database unavailable; retry shortly');
      expect((thrown as ServiceUnavailableError).status).to.equal(503);
      expect((thrown as ServiceUnavailableError).retryAfterSeconds).to.equal(5);
      expect((thrown as Error).cause).to.equal(lost);
      expect(opened).to.equal(1);
    });
  });

  describe('on SQLite', () => {
    it('runs 5 concurrent transactions one at a time, and all resolve', async () => {
      const db = fakeDatabase('sqlite');
      let inFlight = 0;
      let most = 0;
      const order: string[] = [];
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          withTransaction(db, async () => {
            inFlight += 1;
            most = Math.max(most, inFlight);
            order.push(`start ${i}`);
            await tick();
            await tick();
            order.push(`end ${i}`);
            inFlight -= 1;
            return i;
          }),
        ),
      );
      expect(results).to.deep.equal([0, 1, 2, 3, 4]);
      expect(most).to.equal(1);
      expect(order).to.deep.equal([0, 1, 2, 3, 4].flatMap((i) => [`start ${i}`, `end ${i}`]));
    });

    it('goes on with the queue after a transaction fails, and rejects only that one', async () => {
      const db = fakeDatabase('sqlite');
      let inFlight = 0;
      let most = 0;
      const run = (i: number) =>
        withTransaction(db, async () => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await tick();
          inFlight -= 1;
          if (i === 1) throw new Error('second one fails');
          return i;
        });
      const outcomes = await Promise.allSettled([0, 1, 2, 3].map(run));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason.message).to.equal('second one fails');
      expect(outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<number>).value)).to.deep.equal([0, 2, 3]);
      expect(most).to.equal(1);
    });

    it('maps a Sequelize ConnectionError to ServiceUnavailableError and keeps the queue going', async () => {
      let calls = 0;
      const db = fakeDatabase('sqlite', async (fn) => {
        calls += 1;
        if (calls === 1) throw new ConnectionError(new Error('SQLITE_CANTOPEN'));
        return fn({});
      });
      const [first, second] = await Promise.allSettled([withTransaction(db, async () => 'a'), withTransaction(db, async () => 'b')]);
      expect(first.status).to.equal('rejected');
      expect((first as PromiseRejectedResult).reason).to.be.instanceOf(ServiceUnavailableError);
      expect(second).to.deep.equal({ status: 'fulfilled', value: 'b' });
    });
  });

  describe('isolation on the real database (MySQL/MariaDB)', () => {
    beforeEach(function () {
      if (testDb().dialect !== 'mysql') {
        this.currentTest!.title += ' (skipped: MySQL only; SQLite has no isolation levels, TEST_DATABASE_URL picks MariaDB)';
        this.skip();
      }
    });

    it('runs the function READ COMMITTED', async () => {
      const db = testDb();
      const level = await withTransaction(db, async (transaction) => {
        for (const variable of ['@@SESSION.tx_isolation', '@@SESSION.transaction_isolation']) {
          try {
            const [row] = await select<{ level: string }>(db, `SELECT ${variable} AS level`, [], transaction);
            return row.level;
          } catch {
            // MySQL 8 has only transaction_isolation; MariaDB 10.11 has tx_isolation.
          }
        }
        return 'unknown';
      });
      expect(level).to.equal('READ-COMMITTED');
    });

    it('sees, after its first read, a row another connection committed meanwhile', async () => {
      const db = testDb();
      await buildAccount({ name: 'first' });
      const counts = await withTransaction(db, async (transaction) => {
        const count = async () =>
          Number((await select<{ n: number | string }>(db, 'SELECT COUNT(*) AS n FROM accounts', [], transaction))[0].n);
        const before = await count();
        // Committed by another connection while this transaction is open.
        await db.sequelize.query('INSERT INTO accounts (id, name, created_at, updated_at) VALUES (UUID(), ?, NOW(3), NOW(3))', {
          replacements: ['second'],
        });
        return [before, await count()];
      });
      expect(counts).to.deep.equal([1, 2]);
    });
  });
});
