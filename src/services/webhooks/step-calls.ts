import type { Database } from '../../db/database';
import { parseJson, toIso, toIsoOrNull } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import type { WebhookSettings } from './webhook-settings';
import { getWebhook } from './endpoints';

// The calls sequences' webhook steps made to an endpoint, each attempt as its run's timeline
// records it (run_step_executions), newest first: an endpoint's Deliveries in the dashboard
// list them beside the events' attempts (webhook_attempts), which they are not part of.
// Two statements whatever the number: the endpoint's latest sends (the outbox keeps each
// step's send with its target, the endpoint), then their attempts through the executions'
// (run_id, visit, attempt) index.

export interface StepCall {
  runId: string;
  sequenceId: string;
  stepId: string;
  attempt: number;
  status: string;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  startedAt: string;
  // A failed attempt that its send will follow with another: when.
  nextAttemptAt: string | null;
}

export async function listStepCalls(
  db: Database,
  input: { accountId: string; id: string; limit: number },
  settings: WebhookSettings,
): Promise<StepCall[]> {
  const webhook = await getWebhook(db, input, settings);
  // outbox_due leads with status: naming every status lets the statement use it per status.
  const sends = await select<{ run_id: string; run_visit: number | string; status: string; attempt: number | string; due_at: unknown; sequence_id: string; run_status: string }>(
    db,
    `SELECT o.run_id, o.run_visit, o.status, o.attempt, o.due_at, r.sequence_id, r.status AS run_status FROM outbox o JOIN sequence_runs r ON r.id = o.run_id
     WHERE o.status IN ('queued', 'sending', 'held', 'succeeded', 'failed', 'cancelled') AND o.account_id = ? AND o.channel = 'webhook' AND o.target = ?
     ORDER BY o.created_at DESC, o.id DESC LIMIT ?`,
    [input.accountId, webhook.id.toLowerCase(), input.limit],
  );
  if (sends.length === 0) return [];
  const byVisit = new Map(sends.map((send) => [`${send.run_id}/${Number(send.run_visit)}`, send]));
  const visits = sends.map((send) => `(run_id = ? AND visit = ?)`).join(' OR ');
  const rows = await select<{ run_id: string; visit: number | string; step_id: string; attempt: number | string; status: string; reason: string | null; detail: string | null; started_at: unknown }>(
    db,
    `SELECT run_id, visit, step_id, attempt, status, reason, detail, started_at FROM run_step_executions WHERE ${visits}`,
    sends.flatMap((send) => [send.run_id, Number(send.run_visit)]),
  );
  return rows
    .map((row) => {
      const send = byVisit.get(`${row.run_id}/${Number(row.visit)}`)!;
      const detail = row.detail ? parseJson<{ responseStatus?: number | null; durationMs?: number }>(row.detail) : null;
      const last = Number(row.attempt) === Number(send.attempt) && row.status === 'failed';
      return {
        runId: row.run_id,
        sequenceId: send.sequence_id,
        stepId: row.step_id,
        attempt: Number(row.attempt),
        status: row.status,
        responseStatus: typeof detail?.responseStatus === 'number' ? detail.responseStatus : null,
        durationMs: typeof detail?.durationMs === 'number' ? detail.durationMs : null,
        error: row.reason,
        startedAt: toIso(row.started_at),
        // As the run's timeline says it (run-retry.ts): queued, or held for a run that carries on.
        nextAttemptAt: last && (send.status === 'queued' || (send.status === 'held' && send.run_status !== 'paused')) ? toIsoOrNull(send.due_at) : null,
      };
    })
    .sort((a, b) => (a.startedAt === b.startedAt ? b.attempt - a.attempt : a.startedAt < b.startedAt ? 1 : -1))
    .slice(0, input.limit);
}
