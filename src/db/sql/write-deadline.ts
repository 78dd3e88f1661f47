import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceUnavailableError } from '../../errors/app-errors';

// A time after which the work started here commits nothing: a request that holds an
// Idempotency-Key's claim runs under one (src/http/idempotency.ts), so that the claim, which
// lasts until the deadline plus the time its last COMMIT may take, never outlives a write of
// its request. withTransaction (./transaction.ts) checks it just before each COMMIT, and
// execute (./statements.ts) before a write outside a transaction (it commits on its own): past
// it, the transaction is rolled back (the statement is not sent) and the request answers 503 Database busy (a request that
// slow waited on the database), which frees its key.
export interface WriteDeadline {
  at: number;
  now: () => number;
}

const deadlines = new AsyncLocalStorage<WriteDeadline>();

export function withWriteDeadline<T>(deadline: WriteDeadline, fn: () => T): T {
  return deadlines.run(deadline, fn);
}

// For the key's own bookkeeping after the request's work (its answer stored, its claim given
// back): it is not the request's work, and must not be refused for being late.
export function withoutWriteDeadline<T>(fn: () => T): T {
  return deadlines.exit(fn);
}

export function assertBeforeWriteDeadline(): void {
  const deadline = deadlines.getStore();
  if (deadline && deadline.now() >= deadline.at) throw new ServiceUnavailableError('Database busy; retry shortly');
}
