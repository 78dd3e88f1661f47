import { expect } from 'chai';
import { ConnectionError, DatabaseError, UniqueConstraintError } from 'sequelize';
import { isDatabaseUnavailable } from '../../src/db/sql/unavailable';

// Which database errors mean "not there" (503, retry) rather than "this statement is wrong" (src/db/sql/unavailable.ts).
describe('database errors that mean unavailable', () => {
  const driverError = (fields: Record<string, unknown>) => Object.assign(new Error('driver'), fields);
  const wrapped = (fields: Record<string, unknown>) => new DatabaseError(driverError(fields) as never);

  it('counts a lost connection, a refused one and a statement past its deadline', () => {
    for (const code of ['PROTOCOL_CONNECTION_LOST', 'ECONNREFUSED', 'PROTOCOL_SEQUENCE_TIMEOUT']) {
      expect(isDatabaseUnavailable(wrapped({ code })), code).to.equal(true);
    }
    expect(isDatabaseUnavailable(new ConnectionError(driverError({}) as never))).to.equal(true);
  });

  it('counts a fatal driver error without a code: a statement sent on a connection closed under it', () => {
    expect(isDatabaseUnavailable(wrapped({ fatal: true }))).to.equal(true);
  });

  it("counts the driver's own error, unwrapped, as a transaction's COMMIT on a dropped connection throws it", () => {
    expect(isDatabaseUnavailable(driverError({ code: 'PROTOCOL_CONNECTION_LOST', fatal: true }))).to.equal(true);
    expect(isDatabaseUnavailable(driverError({ fatal: true }))).to.equal(true);
    expect(isDatabaseUnavailable(driverError({ code: 'ER_DUP_ENTRY', errno: 1062, fatal: false }))).to.equal(false);
  });

  it('does not count a statement the database refused', () => {
    expect(isDatabaseUnavailable(wrapped({ code: 'ER_PARSE_ERROR', errno: 1064, fatal: false }))).to.equal(false);
    expect(isDatabaseUnavailable(new UniqueConstraintError({}))).to.equal(false);
    expect(isDatabaseUnavailable(new Error('plain'))).to.equal(false);
  });
});
