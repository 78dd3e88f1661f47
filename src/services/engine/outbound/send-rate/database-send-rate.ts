import type { Database } from '../../../../db/database';
import { execute, forUpdate, select } from '../../../../db/sql/statements';
import { withTransaction } from '../../../../db/sql/transaction';
import { windowOf, type Reservation, type SendRate } from './send-rate';

// The shared throttle in the database (db/migrations/20261219000000-create-send-rate-windows.js):
// a row per (account, channel, second), locked while a reservation reads and raises it, so the
// dispatchers of every process share one count. Three short statements per reservation, made
// only for channels with a throttle (email, WhatsApp) and at most once per look of a
// dispatcher for each sender with due messages.
export class DatabaseSendRate implements SendRate {
  constructor(private readonly db: Database) {}

  async reserve(accountId: string, channel: string, want: number, perSecond: number, nowMs: number): Promise<Reservation> {
    const { start, end } = windowOf(nowMs);
    if (want <= 0) return { granted: 0, retryAt: end };
    return withTransaction(this.db, async (transaction) => {
      // The past seconds of this sender are of no use to anyone.
      await execute(this.db, 'DELETE FROM send_rate_windows WHERE account_id = ? AND channel = ? AND window_start < ?', [accountId, channel, start], transaction);
      const keepRow = this.db.dialect === 'sqlite' ? ' ON CONFLICT DO NOTHING' : ' ON DUPLICATE KEY UPDATE started = started';
      await execute(
        this.db,
        `INSERT INTO send_rate_windows (account_id, channel, window_start, started) VALUES (?, ?, ?, 0)${keepRow}`,
        [accountId, channel, start],
        transaction,
      );
      const [row] = await select<{ started: number | string }>(
        this.db,
        `SELECT started FROM send_rate_windows WHERE account_id = ? AND channel = ? AND window_start = ?${forUpdate(this.db)}`,
        [accountId, channel, start],
        transaction,
      );
      const granted = Math.max(0, Math.min(want, perSecond - Number(row?.started ?? 0)));
      if (granted > 0) {
        await execute(
          this.db,
          'UPDATE send_rate_windows SET started = started + ? WHERE account_id = ? AND channel = ? AND window_start = ?',
          [granted, accountId, channel, start],
          transaction,
        );
      }
      return { granted, retryAt: end };
    });
  }

  async release(accountId: string, channel: string, count: number, nowMs: number): Promise<void> {
    if (count <= 0) return;
    // Only within the second it was taken in: a later second's count is not this one's.
    await execute(
      this.db,
      'UPDATE send_rate_windows SET started = CASE WHEN started > ? THEN started - ? ELSE 0 END WHERE account_id = ? AND channel = ? AND window_start = ?',
      [count, count, accountId, channel, windowOf(nowMs).start],
    );
  }
}
