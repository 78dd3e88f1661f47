import type { Database } from '../../db/database';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { NewEventOf } from '../../schemas/event';
import type { StepOf } from '../../schemas/sequence-definition';
import { contactFromRow } from '../contacts/contact-row';
import { recordEvents } from '../events/record-events';
import { runStatusChangedEvent } from '../events/run-events';
import { newRowId } from '../ids';
import { currentSecrets } from '../webhooks/endpoint-secrets';
import { retryDelayMs } from '../webhooks/retry-schedule';
import { sendRequest } from '../webhooks/send-request';
import { signatureHeader } from '../webhooks/sign';
import type { WebhookAttempt } from './record-batch';
import type { ClaimedRun } from './run-queue';

// The webhook step: the one step whose effect is outside the service, so it cannot commit with
// the run's move. It is carried out in three parts:
//   1. begin (one transaction for the batch): an execution row `running` for the attempt, the
//      run `running`. An attempt found still `running` from before is one whose worker stopped
//      between its request and its record: it is recorded failed ("interrupted") and this is the
//      next attempt.
//   2. the request, outside any transaction, bounded by the timeout (a frozen receiver costs
//      timeoutMs, never a hang);
//   3. the outcome, recorded with the rest of the batch (record-batch.ts).
// Every attempt of one step of one run sends the same `webhook-id` (and body `id`): a receiver
// that drops ids it has seen gets the step once, however often a crash made us send it.

export const MAX_WEBHOOK_ATTEMPTS = 6;

export interface WebhookWork {
  run: ClaimedRun;
  step: StepOf<'webhook'>;
}

// Begins the attempts; answers the runs this claim still holds, as they now are.
export async function beginWebhookAttempts(db: Database, work: readonly WebhookWork[], now: Date): Promise<WebhookWork[]> {
  if (work.length === 0) return [];
  const token = work[0]!.run.token;
  return withTransaction(db, async (transaction) => {
    const owned = new Set(
      (
        await select<{ id: string }>(
          db,
          `SELECT id FROM sequence_runs WHERE id IN (?) AND claim_token = ?${forUpdate(db)}`,
          [work.map(({ run }) => run.id), token],
          transaction,
        )
      ).map((row) => row.id),
    );
    const mine = work.filter(({ run }) => owned.has(run.id));
    if (mine.length === 0) return [];
    const ids = mine.map(({ run }) => run.id);
    await execute(
      db,
      `UPDATE run_step_executions SET status = 'failed', reason = ?, finished_at = ? WHERE run_id IN (?) AND status = 'running'`,
      ['interrupted: the worker stopped before it recorded the answer', now, ids],
      transaction,
    );
    await insertRows(
      db,
      'run_step_executions',
      ['id', 'account_id', 'run_id', 'visit', 'attempt', 'step_id', 'type', 'status', 'reason', 'detail', 'started_at', 'finished_at'],
      mine.map(({ run, step }) => [newRowId(), run.accountId, run.id, run.visit, run.attempt + 1, step.id, 'webhook', 'running', null, null, now, null]),
      transaction,
    );
    // Attempt numbers differ only between runs retried a different number of times: a few groups.
    const groups = new Map<string, string[]>();
    for (const { run } of mine) {
      const key = JSON.stringify([run.attempt + 1, (run.stepStartedAt ?? now).toISOString()]);
      groups.set(key, [...(groups.get(key) ?? []), run.id]);
    }
    for (const [key, runIds] of groups) {
      const [attempt, startedAt] = JSON.parse(key) as [number, string];
      await execute(
        db,
        "UPDATE sequence_runs SET status = 'running', attempt = ?, step_started_at = ?, updated_at = ? WHERE id IN (?)",
        [attempt, new Date(startedAt), now, runIds],
        transaction,
      );
    }
    const started = mine.map(({ run, step }) => ({
      step,
      run: { ...run, status: 'running' as const, attempt: run.attempt + 1, stepStartedAt: run.stepStartedAt ?? now },
    }));
    const events = new Map<string, NewEventOf[]>();
    for (const { run } of mine.filter(({ run }) => run.status === 'pending').sort((a, b) => (a.run.accountId < b.run.accountId ? -1 : 1))) {
      const moved = started.find((item) => item.run.id === run.id)!.run;
      const dto = { id: run.id, status: 'running' as const, startedAt: run.startedAt.toISOString(), completedAt: null, createdAt: run.createdAt.toISOString(), version: run.version, currentStepId: run.currentStepId, reason: null };
      events.set(run.accountId, [...(events.get(run.accountId) ?? []), runStatusChangedEvent(dto, moved.sequenceId, moved.contactId, 'pending')]);
    }
    for (const [accountId, list] of events) await recordEvents(db, accountId, list, transaction);
    return started;
  });
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  enabled: unknown;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: unknown;
}

// The requests of begun attempts, at most `concurrency` at a time; answers each one's outcome.
export async function sendWebhookAttempts(
  db: Database,
  work: readonly WebhookWork[],
  options: { now: () => Date; timeoutMs: number; allowInsecure: boolean; concurrency: number; signal?: AbortSignal; random?: () => number },
): Promise<Array<WebhookWork & { attempt: WebhookAttempt }>> {
  if (work.length === 0) return [];
  const endpointIds = [...new Set(work.map(({ step }) => step.endpointId.toLowerCase()))];
  const endpoints = new Map(
    (
      await select<EndpointRow>(
        db,
        'SELECT id, account_id, url, enabled, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id IN (?)',
        [endpointIds],
      )
    ).map((row) => [row.id, row]),
  );
  const results: Array<WebhookWork & { attempt: WebhookAttempt }> = [];
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const item = work[next++]!;
      results.push({ ...item, attempt: await attempt(item, endpoints.get(item.step.endpointId.toLowerCase()), options) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, work.length) }, worker));
  return results;
}

export function webhookStepId(run: { id: string; visit: number }, step: { id: string }): string {
  return `run_${run.id}_${step.id}_${run.visit}`;
}

async function attempt(
  { run, step }: WebhookWork,
  endpoint: EndpointRow | undefined,
  options: { now: () => Date; timeoutMs: number; allowInsecure: boolean; signal?: AbortSignal; random?: () => number },
): Promise<WebhookAttempt> {
  const startedAt = options.now();
  const failed = (reason: string, detail: Record<string, unknown>, final = false): WebhookAttempt => ({
    succeeded: false,
    reason,
    detail,
    startedAt,
    retryAt: final || run.attempt >= MAX_WEBHOOK_ATTEMPTS ? null : new Date(options.now().getTime() + retryDelayMs(run.attempt, options.random)),
  });
  // Deleted since the sequence was saved (or another account's): nothing to send to, ever.
  if (!endpoint || endpoint.account_id !== run.accountId) return failed(`webhook endpoint ${step.endpointId} no longer exists`, {}, true);
  if (!Number(endpoint.enabled)) return failed(`webhook endpoint ${step.endpointId} is disabled`, {});
  const id = webhookStepId(run, step);
  const runDto = {
    id: run.id,
    status: run.status,
    startedAt: run.startedAt.toISOString(),
    completedAt: null,
    createdAt: run.createdAt.toISOString(),
    version: run.version,
    currentStepId: run.currentStepId,
    reason: null,
    sequenceId: run.sequenceId,
    contactId: run.contactId,
  };
  const body = JSON.stringify({
    id,
    type: 'run.step',
    createdAt: (run.stepStartedAt ?? startedAt).toISOString(),
    accountId: run.accountId,
    data: { run: runDto, step, contact: contactFromRow(run.contact), payload: step.payload ?? null },
  });
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const outcome = await sendRequest(
    endpoint.url,
    { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(currentSecrets(endpoint, startedAt), id, timestamp, body) },
    body,
    { timeoutMs: options.timeoutMs, allowInsecure: options.allowInsecure, signal: options.signal },
  );
  const detail = { responseStatus: outcome.status, durationMs: outcome.durationMs };
  if (outcome.error === null && outcome.status !== null && outcome.status >= 200 && outcome.status < 300) {
    return { succeeded: true, reason: null, detail, startedAt, retryAt: null };
  }
  return failed(outcome.error ?? `the receiver answered ${outcome.status}`, outcome.error ? { ...detail, error: outcome.error } : detail);
}
