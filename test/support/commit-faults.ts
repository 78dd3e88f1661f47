import { testDb } from './db';

type Query = ReturnType<typeof testDb>['sequelize']['query'];

function sqlText(sql: unknown): string {
  return typeof sql === 'string' ? sql : ((sql as { query?: string })?.query ?? '');
}

// The connection died just after the database applied a COMMIT, before its answer reached the
// service (or a statement deadline cut the wait for it): the write is stored, and the caller
// sees a lost connection (a 503). Armed by the first statement matching `after`; the next
// COMMIT then goes through and fails. restore() puts the database back.
export function loseCommitAnswerAfter(after: RegExp) {
  const { sequelize } = testDb();
  const original = sequelize.query;
  let armed = false;
  let fired = 0;
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<Query>) {
    const text = sqlText(args[0]);
    if (after.test(text)) armed = true;
    const result = original.apply(this, args);
    if (!armed || !/^\s*COMMIT/i.test(text)) return result;
    armed = false;
    fired += 1;
    return result.then(() => {
      throw Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });
    });
  } as Query;
  return {
    fired: () => fired,
    restore: () => {
      sequelize.query = original;
    },
  };
}

// Statements matching `pattern` fail as on a lost connection, until restore(): for instance the
// write of an Idempotency-Key's answer, as when the process dies after its operation committed.
export function failStatements(pattern: RegExp) {
  const { sequelize } = testDb();
  const original = sequelize.query;
  let failed = 0;
  sequelize.query = function (this: typeof sequelize, ...args: Parameters<Query>) {
    if (!pattern.test(sqlText(args[0]))) return original.apply(this, args);
    failed += 1;
    return Promise.reject(Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }));
  } as Query;
  return {
    failed: () => failed,
    restore: () => {
      sequelize.query = original;
    },
  };
}
