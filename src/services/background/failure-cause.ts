import { isDatabaseUnavailable } from '../../db/sql/unavailable';
import { mysqlErrno } from '../../db/sql/transaction';
import { ServiceUnavailableError } from '../../errors/app-errors';

const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;

// The cause a background loop's failure is logged under: the same names as a request's 503
// (`database`, `database_busy`), so that with one LogThrottle for the process an outage is
// one line per 10 s whoever met it. Anything else is the loop's own (`otherwise`).
export function failureCause(error: unknown, otherwise: string): string {
  const cause = error instanceof ServiceUnavailableError ? error.cause : error;
  const errno = mysqlErrno(cause);
  if (errno === DEADLOCK || errno === LOCK_WAIT_TIMEOUT) return 'database_busy';
  if (error instanceof ServiceUnavailableError || isDatabaseUnavailable(cause)) return 'database';
  return otherwise;
}
