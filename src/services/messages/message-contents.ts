import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';

// What each message of a run carried, as written when it went `sending` (docs/messages.md "The
// record"): an email's { from, to, subject, html, text, headers } (and `links`, the targets of its
// tracked links: src/services/signals/tracked-html.ts), a WhatsApp message's
// { request }. The API does not list it; the dashboard's timeline shows it. One statement.
export type MessageContent = Record<string, unknown>;

export async function contentsOfRun(db: Database, input: { accountId: string; runId: string }): Promise<Record<string, MessageContent>> {
  const rows = await select<{ id: string; content: unknown }>(
    db,
    'SELECT id, content FROM messages WHERE run_id = ? AND account_id = ? AND content IS NOT NULL',
    [input.runId, input.accountId],
  );
  return Object.fromEntries(
    rows.map((row) => [row.id, typeof row.content === 'string' ? parseJson<MessageContent>(row.content) : (row.content as MessageContent)]),
  );
}
