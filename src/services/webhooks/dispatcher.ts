import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database';
import { parseJson, toDate, toIso } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { failureCause } from '../background/failure-cause';
import { LoopBackoff } from '../background/loop-backoff';
import { systemTimers, type TimerHandle, type Timers } from '../background/timers';
import { recordEvents } from '../events/record-events';
import { fanOut } from './fan-out';
import { DISABLE_AFTER_MS, retryDelayMs } from './retry-schedule';
import { sendRequest, type SendOutcome } from './send-request';
import { signatureHeader } from './sign';
import type { WebhookSettings } from './webhook-settings';

export interface DispatcherOptions {
  settings: WebhookSettings;
  logger: Logger;
  // Attempts in flight in this process, in all and per endpoint: a slow receiver holds at most
  // perEndpoint of the slots, never the others'.
  concurrency?: number;
  perEndpoint?: number;
  // One attempt, at most 10 s.
  timeoutMs?: number;
  // A claimed delivery is this dispatcher's until then (3 x timeoutMs unless given); a crash
  // lets it expire and another dispatcher (or this one, restarted) delivers it again.
  leaseMs?: number;
  pollMs?: number;
  random?: () => number;
  // The process's log throttle (requests log through it too): a failing pass is logged at
  // most once per cause per 10 s. Its own, on the dispatcher's clock, unless given.
  logThrottle?: LogThrottle;
  // What the loop schedules its passes with, and the backoff after failed ones.
  timers?: Timers;
  backoff?: { initialMs?: number; maxMs?: number };
}

interface Claimed {
  deliveryId: string;
  endpointId: string;
  token: string;
  attempts: number;
  url: string;
  secrets: string[];
  accountId: string;
  event: { id: string; type: string; createdAt: string; accountId: string; data: unknown };
}

// Fans events out to deliveries, claims due deliveries and sends them.
// Claims: SELECT ... FOR UPDATE SKIP LOCKED on MySQL/MariaDB, so two dispatchers never take
// the same row; on SQLite the transaction queue serialises claims. A claim sets a lease with a
// fresh token; the outcome is written only where the token still matches.
export class WebhookDispatcher {
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly pollMs: number;
  private readonly random: () => number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpointCount = new Map<string, number>();
  private readonly abort = new AbortController();
  private readonly timers: Timers;
  private readonly logThrottle: LogThrottle;
  private readonly backoff: LoopBackoff;
  private timer: TimerHandle | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private running = false;

  constructor(
    private readonly db: Database,
    private readonly options: DispatcherOptions,
  ) {
    this.concurrency = options.concurrency ?? 32;
    this.perEndpoint = options.perEndpoint ?? 4;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? 3 * this.timeoutMs;
    this.pollMs = options.pollMs ?? 250;
    this.random = options.random ?? Math.random;
    this.timers = options.timers ?? systemTimers;
    this.logThrottle = options.logThrottle ?? new LogThrottle(10_000, this.timers.now);
    this.backoff = new LoopBackoff({ name: 'webhook dispatcher', logger: options.logger, throttle: this.logThrottle, ...options.backoff });
  }

  start(): void {
    this.running = true;
    void this.loop();
  }

  private async loop(): Promise<void> {
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    const { started, retryInMs } = await this.tick();
    if (this.stopped) return;
    // A failed pass: wait as the backoff says. Work found and slots left: look again at once;
    // otherwise wait for the poll, or for a slot to come free (wake).
    const delay = retryInMs ?? (started > 0 && this.inFlight.size < this.concurrency ? 0 : this.pollMs);
    this.timer = this.timers.setTimeout(() => void this.loop(), delay);
  }

  // A slot came free: look for more work now rather than at the next poll (not while the
  // database is failing: the backoff decides then).
  private wake(): void {
    if (!this.running || this.stopped || this.ticking || this.timer === undefined || this.backoff.failing) return;
    this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => void this.loop(), 0);
  }

  // One pass: fan out, claim what is due and fits the free slots, send. Resolves when the
  // claimed attempts are done (tests and the benchmark drive the dispatcher with it).
  async runOnce(): Promise<number> {
    const { started } = await this.tick();
    await Promise.all(this.inFlight.values());
    return started;
  }

  // Stops claiming; waits up to boundMs for the attempts in flight, then aborts the rest and
  // releases their leases, so another dispatcher takes them at once. The bound is on the real
  // clock, not the injected timers: it holds a process's exit.
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    this.timers.clearTimeout(this.timer);
    await this.ticking;
    const all = Promise.all(this.inFlight.values());
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), boundMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.abort.abort();
      await all;
    }
  }

  // retryInMs: the pass failed, and the next should wait that long.
  private async tick(): Promise<{ started: number; retryInMs?: number }> {
    if (this.ticking) {
      await this.ticking;
      return { started: 0 };
    }
    let started = 0;
    let retryInMs: number | undefined;
    const run = (async () => {
      try {
        const now = this.options.settings.now();
        await fanOut(this.db, now);
        const free = this.concurrency - this.inFlight.size;
        if (free > 0) {
          for (const claimed of await this.claim(now, free)) {
            started += 1;
            this.launch(claimed);
          }
        }
        this.backoff.succeeded();
      } catch (error) {
        retryInMs = this.backoff.failed(error);
      }
    })();
    this.ticking = run;
    await run;
    this.ticking = undefined;
    return { started, retryInMs };
  }

  private launch(claimed: Claimed): void {
    this.perEndpointCount.set(claimed.endpointId, (this.perEndpointCount.get(claimed.endpointId) ?? 0) + 1);
    // Its lease expires and the delivery is sent again; in an outage every attempt in flight
    // fails to record the same way.
    const work = this.deliver(claimed)
      .catch((error) => {
        this.logThrottle.log(
          this.options.logger,
          'error',
          failureCause(error, 'webhook_delivery'),
          { err: error, deliveryId: claimed.deliveryId },
          'webhook delivery failed to record',
        );
      })
      .finally(() => {
        this.inFlight.delete(claimed.deliveryId);
        const left = (this.perEndpointCount.get(claimed.endpointId) ?? 1) - 1;
        if (left === 0) this.perEndpointCount.delete(claimed.endpointId);
        else this.perEndpointCount.set(claimed.endpointId, left);
        this.wake();
      });
    this.inFlight.set(claimed.deliveryId, work);
  }

  private async claim(now: Date, free: number): Promise<Claimed[]> {
    const lock = this.db.dialect === 'sqlite' ? '' : ' FOR UPDATE SKIP LOCKED';
    const claimed = await withTransaction(this.db, async (transaction) => {
      // A delivery waits for the earlier pending deliveries of its contact to the same
      // endpoint (order_key): per-contact order. The subqueries take no locks.
      const due = await select<{ id: string; endpoint_id: string }>(
        this.db,
        `SELECT d.id, d.endpoint_id FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
           AND d.endpoint_id IN (SELECT w.id FROM webhook_endpoints w WHERE w.enabled = ?)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
             AND p.order_key = d.order_key AND p.status = 'pending' AND p.event_seq < d.event_seq)
         ORDER BY d.next_attempt_at, d.event_seq LIMIT ${Math.max(free * 4, 16)}${lock}`,
        [now, now, true],
        transaction,
      );
      const counts = new Map(this.perEndpointCount);
      const chosen: string[] = [];
      for (const row of due) {
        if (chosen.length >= free) break;
        const count = counts.get(row.endpoint_id) ?? 0;
        if (count >= this.perEndpoint) continue;
        counts.set(row.endpoint_id, count + 1);
        chosen.push(row.id);
      }
      if (chosen.length === 0) return { token: '', ids: [] as string[] };
      const token = randomUUID();
      await execute(
        this.db,
        `UPDATE webhook_deliveries SET lease_until = ?, claim_token = ? WHERE id IN (${chosen.map(() => '?').join(', ')})`,
        [new Date(now.getTime() + this.leaseMs), token, ...chosen],
        transaction,
      );
      return { token, ids: chosen };
    });
    if (claimed.ids.length === 0) return [];
    const rows = await select<{
      id: string;
      endpoint_id: string;
      attempts: number;
      url: string;
      secret: string;
      previous_secret: string | null;
      previous_secret_expires_at: unknown;
      account_id: string;
      event_id: string;
      type: string;
      data: string;
      created_at: unknown;
    }>(
      this.db,
      `SELECT d.id, d.endpoint_id, d.attempts, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.account_id,
              e.id AS event_id, e.type, e.data, e.created_at
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
       WHERE d.id IN (${claimed.ids.map(() => '?').join(', ')}) AND d.claim_token = ?
       ORDER BY d.event_seq`,
      [...claimed.ids, claimed.token],
    );
    return rows.map((row) => ({
      deliveryId: row.id,
      endpointId: row.endpoint_id,
      token: claimed.token,
      attempts: Number(row.attempts),
      url: row.url,
      secrets:
        row.previous_secret && row.previous_secret_expires_at && toDate(row.previous_secret_expires_at) > now
          ? [row.secret, row.previous_secret]
          : [row.secret],
      accountId: row.account_id,
      event: { id: row.event_id, type: row.type, createdAt: toIso(row.created_at), accountId: row.account_id, data: parseJson(row.data) },
    }));
  }

  private async deliver(claimed: Claimed): Promise<void> {
    const { settings } = this.options;
    const body = JSON.stringify(claimed.event);
    const timestamp = Math.floor(settings.now().getTime() / 1000);
    const headers = {
      'webhook-id': claimed.event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(claimed.secrets, claimed.event.id, timestamp, body),
    };
    const outcome = await sendRequest(claimed.url, headers, body, {
      timeoutMs: this.timeoutMs,
      allowInsecure: settings.allowInsecure,
      signal: this.abort.signal,
    });
    if (this.abort.signal.aborted && outcome.error?.startsWith('aborted')) {
      // Stopping: not the receiver's fault; hand the delivery back untouched.
      await execute(this.db, 'UPDATE webhook_deliveries SET lease_until = NULL, claim_token = NULL WHERE id = ? AND claim_token = ?', [
        claimed.deliveryId,
        claimed.token,
      ]);
      return;
    }
    await this.record(claimed, outcome);
  }

  private async record(claimed: Claimed, outcome: SendOutcome): Promise<void> {
    const now = this.options.settings.now();
    const succeeded = outcome.error === null && outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const attempt = claimed.attempts + 1;
    const nextAttemptAt = succeeded ? null : new Date(now.getTime() + retryDelayMs(attempt, this.random));
    await withTransaction(this.db, async (transaction) => {
      await insertRows(
        this.db,
        'webhook_attempts',
        ['delivery_id', 'endpoint_id', 'event_id', 'attempt', 'response_status', 'error', 'duration_ms', 'next_attempt_at', 'created_at'],
        [[claimed.deliveryId, claimed.endpointId, claimed.event.id, attempt, outcome.status, outcome.error, outcome.durationMs, nextAttemptAt, now]],
        transaction,
      );
      await execute(
        this.db,
        `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, lease_until = NULL, claim_token = NULL
         WHERE id = ? AND claim_token = ?`,
        [succeeded ? 'succeeded' : 'pending', attempt, nextAttemptAt ?? now, claimed.deliveryId, claimed.token],
        transaction,
      );
      if (succeeded) {
        await execute(this.db, 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL', [claimed.endpointId], transaction);
        return;
      }
      await this.disableIfFailingTooLong(claimed, now, transaction);
    });
  }

  // Three days of failures without one success: the endpoint is disabled, its pending
  // deliveries stay (re-enabling sends them), and a webhook.disabled event says so.
  private async disableIfFailingTooLong(claimed: Claimed, now: Date, transaction: Parameters<Parameters<typeof withTransaction>[1]>[0]) {
    await execute(this.db, 'UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL', [now, claimed.endpointId], transaction);
    const [endpoint] = await select<{ enabled: unknown; failing_since: unknown; url: string }>(
      this.db,
      `SELECT enabled, failing_since, url FROM webhook_endpoints WHERE id = ?${forUpdate(this.db)}`,
      [claimed.endpointId],
      transaction,
    );
    if (!endpoint || !Number(endpoint.enabled) || endpoint.failing_since === null) return;
    const failingSince = toDate(endpoint.failing_since);
    if (now.getTime() - failingSince.getTime() < DISABLE_AFTER_MS) return;
    await execute(this.db, 'UPDATE webhook_endpoints SET enabled = ?, updated_at = ? WHERE id = ?', [false, now, claimed.endpointId], transaction);
    await recordEvents(this.db, transaction, claimed.accountId, [
      { type: 'webhook.disabled', data: { webhook: { id: claimed.endpointId, url: endpoint.url }, failingSince: failingSince.toISOString() } },
    ]);
    this.options.logger.warn({ webhookId: claimed.endpointId }, 'webhook endpoint disabled after 3 days of failures');
  }
}
