import type { Database } from '../../../../db/database';
import { select } from '../../../../db/sql/statements';
import type { StepOf } from '../../../../schemas/sequence-definition';
import { contactFromRow } from '../../../contacts/contact-row';
import { currentSecrets } from '../../../webhooks/endpoint-secrets';
import { sendRequest } from '../../../webhooks/send-request';
import { signatureHeader } from '../../../webhooks/sign';
import type { ClaimedRun } from '../../claimed-run';
import { claimedEventRun } from '../../run-queue';
import type { Channel, SendResult } from './channel';

// The webhook step's channel (docs/sequences.md "The webhook step"): a signed POST of the body
// composed when the step began, to the endpoint's URL and secrets as they were read when the
// send was claimed (a send claimed ahead goes within one request timeout of that read).

// The receiver's deduplication key: one per run, step and visit of that step (1 the first time
// the run takes the step), the same on every retry, after a crash, a stop, a pause or a move.
export function webhookStepId(runId: string, stepId: string, stepVisit: number): string {
  return `run_${runId}_${stepId}_${stepVisit}`;
}

// The body, composed once when the step begins: every attempt sends the same one.
export function composeWebhook(run: ClaimedRun, step: StepOf<'webhook'>, stepVisit: number, now: Date): { idempotencyId: string; body: string } {
  const idempotencyId = webhookStepId(run.id, step.id, stepVisit);
  const body = JSON.stringify({
    id: idempotencyId,
    type: 'run.step',
    createdAt: now.toISOString(),
    accountId: run.accountId,
    data: {
      run: claimedEventRun(run, { status: 'running', currentStepId: run.currentStepId, completedAt: null, reason: null }),
      step,
      contact: contactFromRow(run.contact),
      payload: step.payload ?? null,
    },
  });
  return { idempotencyId, body };
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

export function webhookChannel(options: { timeoutMs: number; allowInsecure: boolean; now: () => Date }): Channel {
  return {
    name: 'webhook',
    // A look claims up to 32 more of an endpoint's sends than may be under way, each begun as one
    // ends (one claim and one read per batch instead of one each: +11 % webhook steps/s). Each is
    // read again before it begins (dispatcher.ts recheck()), so a pause or an unenroll answered
    // while it waits holds. Begun within one request's timeout of its claim, its attempt ends
    // within its lease (three timeouts at least, engine.ts).
    claimAhead: { sends: 32, startWithinMs: options.timeoutMs },
    async load(db: Database, sends) {
      const ids = [...new Set(sends.map((send) => send.target))];
      const endpoints = new Map(
        (
          await select<EndpointRow>(
            db,
            'SELECT id, account_id, url, enabled, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id IN (?)',
            [ids],
          )
        ).map((row) => [row.id, row]),
      );
      return async (send, signal): Promise<SendResult> => {
        const endpoint = endpoints.get(send.target);
        const failed = (reason: string, detail: Record<string, unknown> = {}, final = false): SendResult => ({ ok: false, reason, detail, final, abandoned: false });
        // Deleted since the sequence was saved (or another account's): nothing to send to, ever.
        if (!endpoint || endpoint.account_id !== send.accountId) return failed(`webhook endpoint ${send.target} no longer exists`, {}, true);
        if (!Number(endpoint.enabled)) return failed(`webhook endpoint ${send.target} is disabled`);
        const now = options.now();
        const body = send.body ?? '';
        const timestamp = Math.floor(now.getTime() / 1000);
        const outcome = await sendRequest(
          endpoint.url,
          {
            'webhook-id': send.idempotencyId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatureHeader(currentSecrets(endpoint, now), send.idempotencyId, timestamp, body),
          },
          body,
          { timeoutMs: options.timeoutMs, allowInsecure: options.allowInsecure, signal },
        );
        const detail = { responseStatus: outcome.status, durationMs: outcome.durationMs };
        if (signal.aborted && outcome.error?.startsWith('aborted')) return { ok: false, reason: outcome.error, detail, final: false, abandoned: true };
        if (outcome.error === null && outcome.status !== null && outcome.status >= 200 && outcome.status < 300) {
          return { ok: true, reason: null, detail, final: false, abandoned: false };
        }
        return failed(outcome.error ?? `the receiver answered ${outcome.status}`, outcome.error ? { ...detail, error: outcome.error } : detail);
      };
    },
  };
}
