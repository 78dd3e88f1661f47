import { v7 as uuidv7 } from 'uuid';
import type { NewEvent } from '../../src/services/events/record-events';
import { marks, sqlTimestamp, type Sql, type Tx } from './sql';

// src/services/events/record-events.ts on bare mysql2: the account's counter bumped (its new
// value handed back by LAST_INSERT_ID), then every event in one multi-row INSERT. The payloads
// are the service's own (contact-events, run-events): the same bytes go to the database.
export async function recordEvents(sql: Sql, tx: Tx, accountId: string, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const bumped = await sql.run(
    'INSERT INTO event_sequences (account_id, last_seq) VALUES (?, ?) ON DUPLICATE KEY UPDATE last_seq = LAST_INSERT_ID(last_seq + VALUES(last_seq))',
    [accountId, events.length],
    tx,
  );
  const last = bumped.affectedRows === 1 ? events.length : Number(bumped.insertId);
  const first = last - events.length + 1;
  const createdAt = sqlTimestamp(new Date());
  await sql.run(
    `INSERT INTO events (id, account_id, seq, type, data, created_at) VALUES ${events.map(() => `(${marks(6)})`).join(', ')}`,
    events.flatMap((event, index) => [uuidv7(), accountId, first + index, event.type, JSON.stringify(event.data), createdAt]),
    tx,
  );
}
