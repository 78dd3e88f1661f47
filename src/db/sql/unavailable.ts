import { ConnectionError } from 'sequelize';
import { ServiceUnavailableError } from '../../errors/app-errors';

// Errors that mean "the database is not there" rather than "this statement is wrong": no
// connection to be had, one lost mid-statement, or no answer in time (src/db/statement-deadline.ts).
// They become a 503, which clients retry.
const LOST_CONNECTION_CODES = new Set([
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

// mysql2 marks `fatal` the errors after which a connection is unusable, some of them without a
// code ("Can't add new command when connection is in closed state", for a statement that meets
// a connection closed under it): the connection failed, not the statement. Sequelize wraps the
// driver's error (as `parent`) for statements, but not always for a transaction's own BEGIN,
// COMMIT or ROLLBACK on a connection the database has just dropped: there the driver's error
// comes as it is.
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  type DriverError = { code?: unknown; fatal?: unknown };
  const { parent, original } = (error ?? {}) as { parent?: DriverError; original?: DriverError };
  const driver = parent ?? original ?? ((error ?? {}) as DriverError);
  if (driver?.fatal === true) return true;
  const code = driver?.code;
  return typeof code === 'string' && LOST_CONNECTION_CODES.has(code);
}

// SQLite's file stayed locked past the connection's busy timeout (src/db/database.ts): another
// process writes to it (the admin command line, a second service on the same file). Nothing
// was written; a retry will do.
export function isDatabaseBusy(error: unknown): boolean {
  type DriverError = { code?: unknown };
  const { parent, original } = (error ?? {}) as { parent?: DriverError; original?: DriverError };
  const code = (parent ?? original ?? ((error ?? {}) as DriverError))?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export async function orUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new ServiceUnavailableError('Database unavailable; retry shortly', { cause: error });
    if (isDatabaseBusy(error)) throw new ServiceUnavailableError('Database busy; retry shortly', { cause: error });
    throw error;
  }
}
