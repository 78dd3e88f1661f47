import type { Database } from '../../db/database';
import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { failureCause } from '../background/failure-cause';
import { LoopBackoff } from '../background/loop-backoff';
import { settleWithin } from '../background/settle-within';
import { systemTimers, type TimerHandle, type Timers } from '../background/timers';
import { claimDueDeliveries, recordAttempt, releaseDelivery, type Claimed } from './delivery-queue';
import { fanOut } from './fan-out';
import { retryDelayMs } from './retry-schedule';
import { sendRequest } from './send-request';
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

// Fans events out to deliveries, claims due deliveries and sends them: the loop. Its statements
// (the claim with its lease, the record of an attempt) are the delivery queue's
// (delivery-queue.ts).
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
    if (await settleWithin(all, boundMs)) {
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
          for (const claimed of await claimDueDeliveries(this.db, now, {
            free,
            perEndpoint: this.perEndpoint,
            inFlightByEndpoint: this.perEndpointCount,
            leaseMs: this.leaseMs,
          })) {
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
    // Stopping: not the receiver's fault; hand the delivery back untouched.
    if (this.abort.signal.aborted && outcome.error?.startsWith('aborted')) return releaseDelivery(this.db, claimed);
    const now = settings.now();
    const succeeded = outcome.error === null && outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const nextAttemptAt = succeeded ? null : new Date(now.getTime() + retryDelayMs(claimed.attempts + 1, this.random));
    const { disabled } = await recordAttempt(this.db, claimed, outcome, { now, nextAttemptAt });
    if (disabled) this.options.logger.warn({ webhookId: claimed.endpointId }, 'webhook endpoint disabled after 3 days of failures');
  }
}
