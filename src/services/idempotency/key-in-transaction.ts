import { UniqueConstraintError, type Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import { ConflictError } from '../../errors/app-errors';
import { IDEMPOTENCY_CLAIM_TIMEOUT_MS, IDEMPOTENCY_RETENTION_MS } from './idempotency-keys';

// The Idempotency-Key a request claimed (src/http/idempotency.ts), handed to the operation it
// runs. `replayed` is set when the operation answered from a result an earlier attempt of the
// same request committed: the transport then says Idempotent-Replayed.
export interface IdempotencyScope {
  accountId: string;
  key: string;
  requestHash: string;
  replayed?: boolean;
}

const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress';

// Runs an operation's work once per Idempotency-Key, inside the operation's own transaction
// (docs/idempotency.md "Exactly once"). The key's row is locked first (before the sequence,
// contacts and runs: docs/architecture.md "One lock order"):
// - it carries a result: an earlier attempt of this request committed its work (its answer was
//   lost to a crash, or to a 503 whose COMMIT was applied after all). That result is the answer;
//   nothing runs again.
// - otherwise the work runs, and its result is written on the row in the same transaction: the
//   runs and the result commit together, or neither does.
// Without a scope (no header, an in-process call) the work just runs.
export async function onceForKey<T>(
  db: Database,
  scope: IdempotencyScope | undefined,
  transaction: Transaction,
  work: () => Promise<T>,
): Promise<T> {
  if (!scope) return work();
  const [row] = await select<{ request_hash: string; operation_result: string | null }>(
    db,
    `SELECT request_hash, operation_result FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?${forUpdate(db)}`,
    [scope.accountId, scope.key],
    transaction,
  );
  // The key now belongs to another request (ours outlived its claim, which a retry then took).
  if (row && row.request_hash !== scope.requestHash) throw new ConflictError(IN_PROGRESS, 'idempotency_in_progress');
  if (row?.operation_result) {
    scope.replayed = true;
    return parseJson<T>(row.operation_result);
  }
  const result = await work();
  const text = JSON.stringify(result);
  if (row) {
    await execute(db, 'UPDATE idempotency_keys SET operation_result = ? WHERE account_id = ? AND idempotency_key = ?', [text, scope.accountId, scope.key], transaction);
    return result;
  }
  // The claim's row is gone (it outlived its timeout and a retry found it stale): written again
  // here, with the result, so that a retry still finds it. A clash means another attempt holds
  // the key now: this one writes nothing.
  const now = Date.now();
  try {
    await insertRows(
      db,
      'idempotency_keys',
      ['account_id', 'idempotency_key', 'request_hash', 'locked_until', 'expires_at', 'operation_result'],
      [[scope.accountId, scope.key, scope.requestHash, new Date(now + IDEMPOTENCY_CLAIM_TIMEOUT_MS), new Date(now + IDEMPOTENCY_RETENTION_MS), text]],
      transaction,
    );
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw new ConflictError(IN_PROGRESS, 'idempotency_in_progress');
    throw error;
  }
  return result;
}
