import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';

// ACTIVITY_RETENTION_DAYS (docs/operations.md "Maintenance"): activities that occurred before
// `before` are deleted through activities_occurred, at most rowsPerChunk per statement, each its
// own transaction, so no lock is held long and a crash loses at most a chunk's progress. Two
// processes doing it at once delete different rows or none (a row is deleted once).

export interface ActivityPruneOptions {
  before: Date;
  rowsPerChunk: number;
  // Per call: a backlog beyond maxChunks is left for the next call.
  maxChunks: number;
  shouldStop?: () => boolean;
}

// Answers how many it deleted, and whether older activities may be left.
export async function pruneActivities(db: Database, options: ActivityPruneOptions): Promise<{ deleted: number; more: boolean }> {
  const limit = Math.max(1, Math.floor(options.rowsPerChunk));
  const sql =
    db.dialect === 'sqlite'
      ? `DELETE FROM activities WHERE rowid IN (SELECT rowid FROM activities INDEXED BY activities_occurred WHERE occurred_at < ? LIMIT ${limit})`
      : `DELETE FROM activities WHERE occurred_at < ? ORDER BY occurred_at LIMIT ${limit}`;
  let deleted = 0;
  for (let chunk = 0; chunk < options.maxChunks; chunk += 1) {
    if (options.shouldStop?.()) return { deleted, more: true };
    const count = await withTransaction(db, (transaction) => execute(db, sql, [options.before], transaction));
    deleted += count;
    if (count < limit) return { deleted, more: false };
  }
  return { deleted, more: true };
}
