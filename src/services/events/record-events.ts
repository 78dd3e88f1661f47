import { randomUUID } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, insertRows, select } from '../../db/sql';

export interface NewEvent {
  type: string;
  data: unknown;
}

export interface RecordedEvent {
  id: string;
  seq: number;
  type: string;
  createdAt: Date;
}

// Records events in the caller's transaction, with the change they describe: never one
// without the other. Call it as the LAST thing before the transaction commits: the bump of
// the account's counter row holds that row's lock until COMMIT, which is what makes `seq`
// order commit order (see db/migrations/20261203000000-create-events.js). Set-based: three
// statements whatever the number of events; nothing is sent for none.
export async function recordEvents(
  db: Database,
  transaction: Transaction,
  accountId: string,
  events: readonly NewEvent[],
): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const bump =
    db.dialect === 'sqlite'
      ? ' ON CONFLICT (account_id) DO UPDATE SET last_seq = last_seq + excluded.last_seq'
      : ' ON DUPLICATE KEY UPDATE last_seq = last_seq + VALUES(last_seq)';
  await execute(db, `INSERT INTO event_sequences (account_id, last_seq) VALUES (?, ?)${bump}`, [accountId, events.length], transaction);
  const [counter] = await select<{ last_seq: number | string }>(
    db,
    'SELECT last_seq FROM event_sequences WHERE account_id = ?',
    [accountId],
    transaction,
  );
  const first = Number(counter!.last_seq) - events.length + 1;
  const createdAt = new Date();
  const recorded = events.map((event, index) => ({ id: randomUUID(), seq: first + index, type: event.type, createdAt }));
  await insertRows(
    db,
    'events',
    ['id', 'account_id', 'seq', 'type', 'data', 'created_at'],
    recorded.map((event, index) => [event.id, accountId, event.seq, event.type, JSON.stringify(events[index]!.data), createdAt]),
    transaction,
  );
  return recorded;
}
