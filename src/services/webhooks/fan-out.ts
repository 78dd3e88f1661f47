import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { execute, insertIgnoringConflicts, select, skipLocked } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { catchUpProjection } from '../events/projection/catch-up';
import { ALWAYS_SENT } from './event-types';
import { newRowId } from '../ids';

const ENDPOINTS_PER_PASS = 100;

// Events -> deliveries, by each endpoint's cursor on events.seq. seq is commit order per
// account (see the events migration), so everything past the cursor that is visible now is
// everything that has committed: advancing the cursor to the last seq read skips nothing.
// Per endpoint and batch: one read of events, one multi-row INSERT, one cursor UPDATE.
// Returns the number of deliveries created.
export async function fanOut(db: Database, now: Date, batchSize = 500): Promise<number> {
  // The run events of what committed before this pass are numbered first (events/projection/):
  // a delivery waits for no projector's poll.
  await catchUpProjection(db);
  const endpoints = await select<{ id: string }>(
    db,
    `SELECT w.id FROM webhook_endpoints w JOIN event_sequences s ON s.account_id = w.account_id
     WHERE w.enabled = ? AND s.last_seq > w.cursor_seq LIMIT ${ENDPOINTS_PER_PASS}`,
    [true],
  );
  let created = 0;
  for (const endpoint of endpoints) created += await fanOutEndpoint(db, endpoint.id, now, batchSize);
  return created;
}

async function fanOutEndpoint(db: Database, endpointId: string, now: Date, batchSize: number): Promise<number> {
  return withTransaction(db, async (transaction) => {
    // Another instance fanning out this endpoint holds its row: skip it rather than wait.
    const [endpoint] = await select<{ account_id: string; cursor_seq: number | string; event_types: string | null; enabled: unknown }>(
      db,
      `SELECT account_id, cursor_seq, event_types, enabled FROM webhook_endpoints WHERE id = ?${skipLocked(db)}`,
      [endpointId],
      transaction,
    );
    if (!endpoint || !Number(endpoint.enabled)) return 0;
    const events = await select<{ id: string; seq: number | string; type: string; data: string }>(
      db,
      `SELECT id, seq, type, data FROM events WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ${Math.trunc(batchSize)}`,
      [endpoint.account_id, Number(endpoint.cursor_seq)],
      transaction,
    );
    if (events.length === 0) return 0;
    const filter = endpoint.event_types === null ? null : new Set(parseJson<string[]>(endpoint.event_types));
    const wanted = events.filter((event) => {
      if (event.type === 'webhook.test') return parseJson<{ webhookId?: string }>(event.data).webhookId === endpointId;
      return ALWAYS_SENT.includes(event.type) || filter === null || filter.has(event.type);
    });
    await insertIgnoringConflicts(
      db,
      'webhook_deliveries',
      ['id', 'endpoint_id', 'event_id', 'event_seq', 'order_key', 'status', 'attempts', 'next_attempt_at', 'created_at'],
      wanted.map((event) => [newRowId(), endpointId, event.id, Number(event.seq), orderKey(event.data), 'pending', 0, now, now]),
      transaction,
    );
    await execute(db, 'UPDATE webhook_endpoints SET cursor_seq = ? WHERE id = ?', [Number(events[events.length - 1]!.seq), endpointId], transaction);
    return wanted.length;
  });
}

// Deliveries with the same key go to an endpoint one after another, in event order: the
// contact an event is about (contact events carry it as data.contact or data.id, runs as
// run.contactId). Other events have none and are not ordered.
function orderKey(data: string): string | null {
  const parsed = parseJson<{ contact?: { id?: unknown }; run?: { contactId?: unknown }; id?: unknown }>(data);
  const contactId = parsed.contact?.id ?? parsed.run?.contactId ?? parsed.id;
  return typeof contactId === 'string' ? contactId.slice(0, 64) : null;
}
