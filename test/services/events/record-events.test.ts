import { expect } from 'chai';
import { withTransaction } from '../../../src/db/sql/transaction';
import { recordEvents } from '../../../src/services/events/record-events';
import { captureQueries, testDb } from '../../support/db';
import { buildTenant } from '../../support/factories';

// The counter behind `seq`: numbers follow on per account, from the account's first event.

const record = (accountId: string, count: number) =>
  withTransaction(testDb(), (transaction) =>
    recordEvents(testDb(), transaction, accountId, Array.from({ length: count }, (_, i) => ({ type: 'contact.deleted', data: { i } }))),
  );

describe('recordEvents', () => {
  it('numbers an account\'s events 1, 2, 3... across transactions, each account on its own', async () => {
    const a = await buildTenant();
    const b = await buildTenant();
    expect((await record(a.accountId, 3)).map((e) => e.seq)).to.deep.equal([1, 2, 3]);
    expect((await record(b.accountId, 1)).map((e) => e.seq)).to.deep.equal([1]);
    expect((await record(a.accountId, 2)).map((e) => e.seq)).to.deep.equal([4, 5]);
    expect((await record(a.accountId, 1)).map((e) => e.seq)).to.deep.equal([6]);
  });

  it('sends the same statements for 100 events as for 1, and none for none', async () => {
    const { accountId } = await buildTenant();
    await record(accountId, 1);
    const one = await captureQueries(() => record(accountId, 1));
    const hundred = await captureQueries(() => record(accountId, 100));
    const none = await captureQueries(() => record(accountId, 0));
    expect(hundred.queries.length).to.equal(one.queries.length);
    // BEGIN and COMMIT, the counter (one statement on MySQL, two on SQLite), the insert.
    expect(one.queries.length).to.equal(testDb().dialect === 'sqlite' ? 5 : 4);
    expect(none.queries.length).to.equal(2);
  });
});
