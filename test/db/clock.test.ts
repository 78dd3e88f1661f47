import { expect } from 'chai';
import { databaseNow } from '../../src/db/sql/clock';
import { testDb } from '../support/db';

// The database's clock (src/db/sql/clock.ts), read as a Date on either dialect.
describe("the database's clock", () => {
  it('reads the database server time, to the millisecond, in UTC', async () => {
    const before = Date.now();
    const now = await databaseNow(testDb());
    const after = Date.now();
    // The same host's clock here: within the read's round trip (and the millisecond it rounds
    // to); a time read in the session's zone, or a second's precision, would be off.
    expect(now.getTime()).to.be.within(before - 1, after + 1);
  });
});
