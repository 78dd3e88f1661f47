import type { Database } from '../../../../db/database';
import { select } from '../../../../db/sql/statements';
import type { MessageStatus } from '../../../../schemas/message';
import type { RunDto } from '../../../../schemas/sequence';
import { CONTACT_COLUMNS, type ContactRow } from '../../../contacts/contact-row';
import { RUN_SELECT, runFromRow, type RunRow } from '../../../runs/runs';
import type { ClaimedSend } from '../../../runs/outbox';

// What a batch of message sends needs, read when they go, in three statements whatever the
// batch's size: each one's message row and its contact as it is now (status, address, fields),
// its run and its sequence's name (the templates' `run` and `sequence`).

export interface MessageTarget {
  messageId: string;
  status: MessageStatus;
  contact: ContactRow;
  run: RunDto | null;
  sequenceName: string;
}

export async function loadMessageTargets(db: Database, sends: readonly ClaimedSend[]): Promise<Map<string, MessageTarget>> {
  if (sends.length === 0) return new Map();
  const rows = await select<ContactRow & { message_id: string; message_key: string; message_status: MessageStatus; sequence_name: string | null }>(
    db,
    `SELECT m.id AS message_id, m.message_key, m.status AS message_status, s.name AS sequence_name, ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')}
     FROM messages m JOIN contacts c ON c.id = m.contact_id LEFT JOIN sequences s ON s.id = m.sequence_id
     WHERE m.message_key IN (?)`,
    [[...new Set(sends.map((send) => send.idempotencyId))]],
  );
  const runs = new Map(
    (await select<RunRow>(db, `${RUN_SELECT} WHERE id IN (?)`, [[...new Set(sends.map((send) => send.runId))]])).map((row) => [row.id, runFromRow(row)]),
  );
  const byKey = new Map(rows.map((row) => [row.message_key, row]));
  const targets = new Map<string, MessageTarget>();
  for (const send of sends) {
    const row = byKey.get(send.idempotencyId);
    if (!row) continue;
    const { message_id, message_key: _key, message_status, sequence_name, ...contact } = row;
    targets.set(send.idempotencyId, { messageId: message_id, status: message_status, contact: contact as ContactRow, run: runs.get(send.runId) ?? null, sequenceName: sequence_name ?? '' });
  }
  return targets;
}
