import { expect } from 'chai';
import request from 'supertest';
import { api, testApp } from '../support/app';
import { testDb, withFailingStatements } from '../support/db';
import { buildTenant } from '../support/factories';
import { countRows } from '../support/sequence-rows';

// A write that cannot get its locks (issue 7): a deadlock on every one of its 5 attempts, or
// a lock-wait timeout, is a busy database, not a bug. Both transports answer 503 "Database
// busy; retry shortly" with Retry-After, never 500, and nothing is written. Simulated by
// making every statement on contacts fail with the MySQL error; the retries and this mapping
// are MySQL's (SQLite runs one transaction at a time and never deadlocks).

const BUSY = 'Database busy; retry shortly';

function mysqlError(errno: number, message: string) {
  return Object.assign(new Error(message), { parent: Object.assign(new Error(message), { errno }) });
}

const FAILURES: Array<{ name: string; make: () => Error; attempts: number }> = [
  {
    name: 'a deadlock (1213) on every attempt',
    make: () => mysqlError(1213, 'Deadlock found when trying to get lock; try restarting transaction'),
    attempts: 5,
  },
  {
    name: 'a lock-wait timeout (1205)',
    make: () => mysqlError(1205, 'Lock wait timeout exceeded; try restarting transaction'),
    attempts: 1,
  },
];

describe('Database busy', () => {
  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite never deadlocks, TEST_DATABASE_URL picks MariaDB)';
      this.skip();
    }
  });

  for (const { name, make, attempts } of FAILURES) {
    it(`answers a REST batch 503 with Retry-After after ${name}, and writes nothing`, async () => {
      const { key, accountId } = await buildTenant();
      let tries = 0;
      const res = await withFailingStatements(
        { scope: 'contacts', failure: () => ((tries += 1), make()) },
        () => api(key).post('/contacts/batch').send({ contacts: [{ email: 'a@example.com' }, { email: 'b@example.com' }] }).then((r) => r),
      );

      expect(res.status, res.text).to.equal(503);
      expect(res.headers['retry-after']).to.equal('5');
      expect(res.body).to.deep.include({ error: BUSY });
      expect(res.text).to.not.match(/deadlock|lock wait/i);
      expect(tries, 'attempts').to.equal(attempts);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });

    it(`answers tRPC contacts.upsert 503 SERVICE_UNAVAILABLE with Retry-After after ${name}`, async () => {
      const { key, accountId } = await buildTenant();
      const res = await withFailingStatements({ scope: 'contacts', failure: make }, () =>
        request(testApp()).post('/trpc/contacts.upsert').set('x-api-key', key).send({ email: 'ada@example.com' }).then((r) => r),
      );

      expect(res.status, res.text).to.equal(503);
      expect(res.headers['retry-after']).to.equal('5');
      expect(res.body.error.message).to.equal(BUSY);
      expect(res.body.error.data).to.include({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503, path: 'contacts.upsert' });
      expect(res.text).to.not.match(/deadlock|lock wait/i);
      expect(await countRows('contacts', accountId)).to.equal(0);
    });
  }
});
