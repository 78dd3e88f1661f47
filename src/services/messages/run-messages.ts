import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import type { MessageSummaryDto } from '../../schemas/message';
import { MESSAGE_COLUMNS, messageSummaryFromRow, type MessageRow } from './message-rows';

// The messages of a run's visits, for its timeline: one statement (messages_run_visit), by the
// visit each was sent at. Every attempt of a visit shows the same message.
export async function messagesOfRun(db: Database, runId: string): Promise<Map<number, MessageSummaryDto>> {
  const rows = await select<MessageRow>(db, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND run_visit IS NOT NULL`, [runId]);
  return new Map(rows.map((row) => [Number(row.run_visit), messageSummaryFromRow(row)]));
}
