import type { Database } from '../../../../db/database';
import { select } from '../../../../db/sql/statements';
import type { MessageStatus } from '../../../../schemas/message';
import type { RunDto } from '../../../../schemas/sequence';
import { CONTACT_COLUMNS, type ContactRow } from '../../../contacts/contact-row';
import { RUN_COLUMNS_READ, runFromRow, type RunRow } from '../../../runs/runs';
import { readSnapshot } from '../../../activities/activity-snapshot';
import { NO_ACTIVITIES, type RunActivities } from '../../../messages/render-context';
import type { ClaimedSend } from '../../../runs/outbox';

// What a batch of message sends needs, read when they go, in three statements whatever the
// batch's size: each one's message row and its contact as it is now (status, address, fields),
// its run and its sequence's name (the templates' `run` and `sequence`), with the run's activities
// (`trigger`, `waited`).

export interface MessageTarget {
  messageId: string;
  status: MessageStatus;
  contact: ContactRow;
  run: RunDto | null;
  sequenceName: string;
  // The run's `trigger` and `waited` activities, for the templates (docs/templates.md).
  activities: RunActivities;
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
  const runRows = await select<RunRow & { trigger_activity: string | null; waited_activity: string | null }>(
    db,
    `SELECT ${RUN_COLUMNS_READ}, trigger_activity, waited_activity FROM sequence_runs WHERE id IN (?)`,
    [[...new Set(sends.map((send) => send.runId))]],
  );
  const runs = new Map(runRows.map((row) => [row.id, runFromRow(row)]));
  const activities = new Map(runRows.map((row) => [row.id, { trigger: readSnapshot(row.trigger_activity), waited: readSnapshot(row.waited_activity) }]));
  const byKey = new Map(rows.map((row) => [row.message_key, row]));
  const targets = new Map<string, MessageTarget>();
  for (const send of sends) {
    const row = byKey.get(send.idempotencyId);
    if (!row) continue;
    const { message_id, message_key: _key, message_status, sequence_name, ...contact } = row;
    targets.set(send.idempotencyId, { messageId: message_id, status: message_status, contact: contact as ContactRow, run: runs.get(send.runId) ?? null, sequenceName: sequence_name ?? '', activities: activities.get(send.runId) ?? NO_ACTIVITIES });
  }
  return targets;
}
