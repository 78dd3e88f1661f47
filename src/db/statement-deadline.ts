import { EventEmitter } from 'node:events';

// A deadline on every statement sent over one mysql2 connection.
//
// Sequelize passes no timeout to mysql2, so a server that accepts a statement and never
// answers (frozen, a stuck host) holds the request for as long as that lasts. mysql2's own
// `timeout` option is not enough either: its clock starts only when the statement reaches the
// head of the connection's queue, and after it fires the statement stays queued, so the next
// statement on that connection (the transaction's ROLLBACK, or the next request's query once
// the pool hands the connection out again) waits behind it with no clock at all.
//
// Here the clock starts at the call. When it runs out, the caller gets an error at once and
// the connection is closed for good: Sequelize's pool sees it as invalid and makes a new one,
// and a reply that arrives late is dropped with the socket instead of being read as the
// answer to a later statement. The transaction it was in is over: the server rolls back a
// connection's open transaction when it finds the connection gone, so the ROLLBACK Sequelize
// then sends is answered as done (sent, it would fail, and Sequelize would print a warning
// that the connection is "in an undetermined state").

export class StatementTimeoutError extends Error {
  // The code mysql2 gives its own query timeout; src/db/sql/unavailable.ts maps it to a 503.
  readonly code = 'PROTOCOL_SEQUENCE_TIMEOUT';

  constructor(timeoutMs: number) {
    super(`The database did not answer within ${timeoutMs} ms`);
    this.name = 'StatementTimeoutError';
  }
}

type Callback = (...results: unknown[]) => void;
type Send = (...args: unknown[]) => unknown;

export interface MysqlStatementConnection {
  query: Send;
  execute: Send;
  destroy(): void;
  stream?: { destroy(): void };
}

// timeoutMs() is read at each call; undefined sends the statement without a deadline.
export function boundStatements(connection: MysqlStatementConnection, timeoutMs: () => number | undefined): void {
  let abandoned = false;
  const abandon = () => {
    abandoned = true;
    connection.destroy();
    // destroy() only half-closes; a frozen server would keep the socket open until it wakes.
    connection.stream?.destroy();
  };
  for (const method of ['query', 'execute'] as const) {
    const send = connection[method].bind(connection);
    connection[method] = (...args: unknown[]) => {
      const callback = args.at(-1);
      // Sequelize always passes a callback; anything else is sent as it is.
      if (typeof callback !== 'function') return send(...args);
      if (abandoned && isRollback(args[0])) {
        process.nextTick(callback as Callback, null, {});
        // Sequelize sets a listener limit on what query() returns.
        return new EventEmitter();
      }
      const ms = timeoutMs();
      if (ms === undefined) return send(...args);
      let answered = false;
      const timer = setTimeout(() => {
        answered = true;
        abandon();
        (callback as Callback)(new StatementTimeoutError(ms));
      }, ms);
      return send(...args.slice(0, -1), (...results: unknown[]) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        (callback as Callback)(...results);
      });
    };
  }
}

function isRollback(statement: unknown): boolean {
  const sql = typeof statement === 'string' ? statement : (statement as { sql?: unknown } | undefined)?.sql;
  return typeof sql === 'string' && /^\s*ROLLBACK\b/i.test(sql);
}
