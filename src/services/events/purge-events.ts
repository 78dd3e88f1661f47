import { QueryTypes } from 'sequelize';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { orUnavailable } from '../../db/sql/unavailable';

// Deletes events recorded before `before`, `batchSize` rows per statement, until none is left
// or `maxBatches` have run, or shouldStop() says so between batches. Small batches keep each
// statement short: writers insert into the same table meanwhile. Each batch is a transaction
// of its own (on SQLite, that queues it with the writers instead of inside one of theirs).
// Returns how many were deleted.
export async function purgeEventsBefore(
  db: Database,
  options: { before: Date; batchSize: number; maxBatches: number; shouldStop?: () => boolean },
): Promise<number> {
  // SQLite's DELETE takes no LIMIT unless compiled to; a subquery by the primary key does.
  const sql =
    db.dialect === 'sqlite'
      ? 'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ? LIMIT ?)'
      : 'DELETE FROM events WHERE created_at < ? LIMIT ?';
  const before = db.dialect === 'sqlite' ? options.before : options.before.toISOString().slice(0, 23).replace('T', ' ');
  let total = 0;
  for (let batch = 0; batch < options.maxBatches && !options.shouldStop?.(); batch += 1) {
    const deleted = await withTransaction(db, (transaction) =>
      orUnavailable(async () =>
        Number(
          await db.sequelize.query(sql, {
            replacements: [before, options.batchSize],
            type: QueryTypes.BULKDELETE,
            transaction,
          }),
        ),
      ),
    );
    total += deleted;
    if (deleted < options.batchSize) break;
  }
  return total;
}
