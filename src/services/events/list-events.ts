import type { Database } from '../../db/database';
import { parseJson, toIso } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import type { EventDto, EventType } from '../../schemas/event';
import { decodeCursor, encodeCursor } from './event-cursor';
import { catchUpProjection } from './projection/catch-up';

interface EventRow {
  id: string;
  seq: number | string;
  type: string;
  data: unknown;
  created_at: unknown;
}

// The account's events after the cursor, in `seq` order, which is commit order
// (recordEvents): an event that commits later always has a higher seq, so a reader that
// resumes from its last cursor never skips one.
// nextCursor is never null: on a short or empty page it is where the reader stands (its last
// event, or the cursor it gave), to poll again with for what comes next.
export async function listEvents(
  db: Database,
  input: { accountId: string; after?: string; type?: EventType; limit: number },
): Promise<{ events: EventDto[]; nextCursor: string }> {
  const after = input.after === undefined ? 0 : decodeCursor(input.after);
  // The run events of changes committed before this read are numbered first (projection/).
  await catchUpProjection(db);
  const rows = await select<EventRow>(
    db,
    `SELECT id, seq, type, data, created_at FROM events
      WHERE account_id = ? AND seq > ?${input.type ? ' AND type = ?' : ''} ORDER BY seq LIMIT ?`,
    [input.accountId, after, ...(input.type ? [input.type] : []), input.limit],
  );
  const events = rows.map(
    (row) =>
      ({
        id: row.id,
        type: row.type,
        createdAt: toIso(row.created_at),
        accountId: input.accountId,
        data: parseJson(row.data),
      }) as EventDto,
  );
  const last = rows.at(-1);
  return { events, nextCursor: encodeCursor(last ? Number(last.seq) : after) };
}
