import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, executeForInsertId, insertRows, select } from '../../db/sql/statements';
import { newRowId } from '../ids';
import { runLogOf } from './projection/run-log';

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
// without the other. Call it as the LAST thing before the transaction commits.
//
// The run events (`run.*`) go into the transaction's run log row (projection/run-log.ts) and
// are numbered when the projector applies it, in the order they were made, after this
// transaction's other events: a run's events are all written that way, so they keep their
// order among themselves (docs/webhooks.md "Order"). The others are numbered now. Answers the
// events numbered now.
export async function recordEvents(
  db: Database,
  accountId: string,
  events: readonly NewEvent[],
  transaction: Transaction,
): Promise<RecordedEvent[]> {
  const now: NewEvent[] = [];
  for (const event of events) {
    if (isRunEvent(event.type)) runLogOf(db, transaction).events.push({ accountId, type: event.type, data: event.data });
    else now.push(event);
  }
  return insertEvents(db, accountId, now, transaction);
}

export const isRunEvent = (type: string) => type.startsWith('run.');

// Numbers and inserts events: the bump of the account's counter row holds that row's lock
// until COMMIT, which is what makes `seq` order commit order (see
// db/migrations/20261203000000-create-events.js); so it is the transaction's last write but
// for its run log row. Set-based: two statements whatever the number of events (three on
// SQLite); nothing is sent for none. `createdAt`: when the change was made (the projector's
// events carry their transaction's time), else now; `json`: the data already serialised.
export async function insertEvents(
  db: Database,
  accountId: string,
  events: ReadonlyArray<NewEvent & { createdAt?: Date; json?: string }>,
  transaction: Transaction,
): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const last = await bumpCounter(db, accountId, events.length, transaction);
  const first = last - events.length + 1;
  const now = new Date();
  const recorded = events.map((event, index) => ({ id: newRowId(), seq: first + index, type: event.type, createdAt: event.createdAt ?? now }));
  await insertRows(
    db,
    'events',
    ['id', 'account_id', 'seq', 'type', 'data', 'created_at'],
    recorded.map((event, index) => [event.id, accountId, event.seq, event.type, events[index]!.json ?? JSON.stringify(events[index]!.data), event.createdAt]),
    transaction,
  );
  return recorded;
}

// Adds `count` to the account's counter and returns its new value. On MySQL in one statement:
// LAST_INSERT_ID(expr) hands the updated value back with the statement's answer (the documented
// idiom for INSERT ... ON DUPLICATE KEY UPDATE), and a row just created holds `count`. That is
// one round trip less while the counter's lock is held. SQLite reads it back (RETURNING would
// need Sequelize to run an INSERT as a read).
async function bumpCounter(db: Database, accountId: string, count: number, transaction: Transaction): Promise<number> {
  if (db.dialect === 'sqlite') {
    await execute(
      db,
      'INSERT INTO event_sequences (account_id, last_seq) VALUES (?, ?)' +
        ' ON CONFLICT (account_id) DO UPDATE SET last_seq = last_seq + excluded.last_seq',
      [accountId, count],
      transaction,
    );
    const [counter] = await select<{ last_seq: number | string }>(
      db,
      'SELECT last_seq FROM event_sequences WHERE account_id = ?',
      [accountId],
      transaction,
    );
    return Number(counter!.last_seq);
  }
  const { insertId, affectedRows } = await executeForInsertId(
    db,
    'INSERT INTO event_sequences (account_id, last_seq) VALUES (?, ?)' +
      ' ON DUPLICATE KEY UPDATE last_seq = LAST_INSERT_ID(last_seq + VALUES(last_seq))',
    [accountId, count],
    transaction,
  );
  // 1 row affected: inserted, holding `count`; 2: updated, to LAST_INSERT_ID.
  if (affectedRows === 1) return count;
  if (affectedRows !== 2) throw new Error(`event counter bump affected ${affectedRows} rows`);
  return insertId;
}
