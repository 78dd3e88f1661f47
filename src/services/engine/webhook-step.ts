import type { Database } from '../../db/database';
import { execute, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { NewEventOf } from '../../schemas/event';
import type { Step, StepOf } from '../../schemas/sequence-definition';
import { contactFromRow } from '../contacts/contact-row';
import { recordEvents } from '../events/record-events';
import { runStatusChangedEvent } from '../events/run-events';
import { newRowId } from '../ids';
import { countRunMoves } from '../run-status/run-status-counts';
import { toIso } from '../../db/sql/rows';
import { currentSecrets } from '../webhooks/endpoint-secrets';
import { retryDelayMs } from '../webhooks/retry-schedule';
import { sendRequest } from '../webhooks/send-request';
import { signatureHeader } from '../webhooks/sign';
import type { StepCount, WebhookAttempt } from './record-batch';
import { byAccount, claimedEventRun, claimedRunDto, lockClaimedRuns, type ClaimedRun } from './run-queue';

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
  // Its version's steps: where the run goes once the step succeeds.
  steps: readonly Step[];
}

export const INTERRUPTED = 'interrupted: the worker stopped before it recorded the answer';

export interface BegunAttempts {
  // The runs this claim still holds, as they now are, their attempt begun.
  begun: WebhookWork[];
  // Runs whose last allowed attempt was cut short: their step fails (the caller records it).
  exhausted: WebhookWork[];
  counts: StepCount[];
}

// Begins the attempts, in one transaction for the batch.
export async function beginWebhookAttempts(db: Database, work: readonly WebhookWork[], now: Date, leaseUntil?: Date): Promise<BegunAttempts> {
  if (work.length === 0) return { begun: [], exhausted: [], counts: [] };
  const token = work[0]!.run.token;
  return withTransaction(db, async (transaction) => {
    const owned = await lockClaimedRuns(db, work.map(({ run }) => run.id), token, transaction);
    const mine = work.filter(({ run }) => owned.has(run.id));
    if (mine.length === 0) return { begun: [], exhausted: [], counts: [] };
    const cut = new Map(
      (
        await select<{ run_id: string; attempt: number | string; started_at: unknown }>(
          db,
          "SELECT run_id, attempt, started_at FROM run_step_executions WHERE run_id IN (?) AND status = 'running'",
          [mine.map(({ run }) => run.id)],
          transaction,
        )
      ).map((row) => [row.run_id, row]),
    );
    const exhausted = mine.filter(({ run }) => cut.has(run.id) && run.attempt >= MAX_WEBHOOK_ATTEMPTS);
    const starting = mine.filter((item) => !exhausted.includes(item));
    if (starting.length === 0) return { begun: [], exhausted, counts: [] };
    const ids = starting.map(({ run }) => run.id);
    const events: Array<{ accountId: string; event: NewEventOf }> = [];
    const addEvent = (accountId: string, event: NewEventOf) => events.push({ accountId, event });
    const counts: StepCount[] = [];
    // Attempts cut short by a dead worker: failed attempts like any other, retried now.
    for (const { run, step } of starting) {
      const row = cut.get(run.id);
      if (!row) continue;
      counts.push({ type: 'webhook', outcome: 'failed' });
      addEvent(run.accountId, {
        type: 'run.step_failed',
        data: {
          run: claimedEventRun(run, unchanged(run)),
          step: { id: step.id, type: step.type },
          execution: {
            stepId: step.id,
            type: step.type,
            attempt: Number(row.attempt),
            status: 'failed',
            reason: INTERRUPTED,
            detail: null,
            startedAt: toIso(row.started_at),
            finishedAt: now.toISOString(),
          },
          retryAt: now.toISOString(),
        },
      });
    }
    await execute(
      db,
      `UPDATE run_step_executions SET status = 'failed', reason = ?, finished_at = ? WHERE run_id IN (?) AND status = 'running'`,
      [INTERRUPTED, now, ids],
      transaction,
    );
    await insertRows(
      db,
      'run_step_executions',
      ['id', 'account_id', 'run_id', 'visit', 'attempt', 'step_id', 'type', 'status', 'reason', 'detail', 'started_at', 'finished_at'],
      starting.map(({ run, step }) => [newRowId(), run.accountId, run.id, run.visit, run.attempt + 1, step.id, 'webhook', 'running', null, null, now, null]),
      transaction,
    );
    // Attempt numbers differ only between runs retried a different number of times: a few groups.
    const groups = new Map<string, string[]>();
    for (const { run } of starting) {
      const key = JSON.stringify([run.attempt + 1, (run.stepStartedAt ?? now).toISOString()]);
      const group = groups.get(key);
      if (group) group.push(run.id);
      else groups.set(key, [run.id]);
    }
    for (const [key, runIds] of groups) {
      const [attempt, startedAt] = JSON.parse(key) as [number, string];
      await execute(
        db,
        "UPDATE sequence_runs SET status = 'running', attempt = ?, step_started_at = ?, updated_at = ?, due_at = COALESCE(?, due_at) WHERE id IN (?)",
        [attempt, new Date(startedAt), now, leaseUntil ?? null, runIds],
        transaction,
      );
    }
    countRunMoves(db, transaction, starting.map(({ run }) => ({ sequenceId: run.sequenceId, from: owned.get(run.id)!, to: 'running' as const })));
    for (const { run } of starting) {
      if (run.status === 'pending') {
        addEvent(run.accountId, runStatusChangedEvent(claimedRunDto(run, { ...unchanged(run), status: 'running' }), run.sequenceId, run.contactId, 'pending'));
      }
    }
    for (const [accountId, list] of byAccount(events)) await recordEvents(db, accountId, list.map(({ event }) => event), transaction);
    const begun = starting.map((item) => ({
      ...item,
      run: { ...item.run, status: 'running' as const, attempt: item.run.attempt + 1, stepStartedAt: item.run.stepStartedAt ?? now },
    }));
    return { begun, exhausted, counts };
  });
}

// A run under way, as it is: nothing of it has ended.
function unchanged(run: ClaimedRun) {
  return { status: run.status, currentStepId: run.currentStepId, completedAt: null, reason: null };
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
  const runDto = claimedEventRun(run, unchanged(run));
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
