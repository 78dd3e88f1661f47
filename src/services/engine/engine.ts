import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { failureCause } from '../background/failure-cause';
import { LoopBackoff } from '../background/loop-backoff';
import { settleWithin } from '../background/settle-within';
import { systemTimers, type TimerHandle, type Timers } from '../background/timers';
import { onDueWork } from './due-work';
import { EngineClock } from './engine-clock';
import { planBatch } from './plan-batch';
import type { RunResult, StepCount } from './record-batch';
import { recordIsolated } from './record-isolated';
import { claimDueRuns, loadClaimedRuns, nextDueAt, releaseRuns, type Claim, type DeadLetter } from './run-queue';
import { beginWebhookAttempts, INTERRUPTED, sendWebhookAttempts, type WebhookWork } from './webhook-step';

// Requests of one batch of webhook steps under way at once.
const WEBHOOK_CONCURRENCY = 64;

// What the engine reports, if given (src/metrics/metrics.ts registers them).
export interface EngineMetrics {
  steps: { inc(labels: { type: string; outcome: string }, value: number): void };
  lagSeconds: { observe(value: number): void };
  // Runs failed alone because their stored data could not be planned or recorded.
  unprocessable?: { inc(labels: { stage: 'plan' | 'record' }, value: number): void };
  // Runs set aside after their claims kept running out (run-queue.ts, dead letters).
  deadLettered?: { inc(value: number): void };
}

export interface EngineOptions {
  logger: Logger;
  // The engine's clock and timers: tests move time by hand and never wait for real.
  timers?: Timers;
  // The process's log throttle (requests and the dispatcher log through it too).
  logThrottle?: LogThrottle;
  backoff?: { initialMs?: number; maxMs?: number };
  // Runs claimed at most per pass.
  batchSize?: number;
  // A claimed run is this engine's until then; a crash lets it become due again.
  leaseMs?: number;
  // The longest the engine sleeps without looking: what another process made due is found
  // within this (this process's own writes wake it at once).
  idlePollMs?: number;
  // A run is set aside after this many claims in a row whose lease ran out unrecorded.
  deadLetterAfter?: number;
  webhook: { timeoutMs: number; allowInsecure: boolean; concurrency?: number; maxInFlight?: number; random?: () => number };
  metrics?: EngineMetrics;
}

// The sequence engine: a loop over sequence_runs (docs/sequences.md "How runs move"). Each pass
// reads the database's clock (engine-clock.ts), claims the runs that are due, fairly across
// accounts (run-queue.ts), decides what each does, one run at a time (plan-batch.ts, plan-run.ts,
// the step handlers in steps/), and records it all in one transaction (record-batch.ts; split
// down to the run that cannot be recorded, record-isolated.ts). Webhook steps
// send their requests outside the pass, at most maxInFlight at a time, so a slow receiver never
// holds up the other runs. The loop holds no due work itself: between passes it sleeps until
// the earliest due time (or idlePollMs), or until this process makes work due.
export class SequenceEngine {
  private readonly timers: Timers;
  private readonly clock: EngineClock;
  private readonly logThrottle: LogThrottle;
  private readonly backoff: LoopBackoff;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly idlePollMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightRuns = 0;
  private readonly abort = new AbortController();
  private timer: TimerHandle | undefined;
  private ticking: Promise<{ claimed: number; retryInMs?: number }> | undefined;
  private stopped = false;
  private running = false;
  private unsubscribe: (() => void) | undefined;
  // Where the fair claim's next search for accounts with due runs starts (run-queue.ts).
  private claimCursor = '';

  constructor(
    private readonly db: Database,
    private readonly options: EngineOptions,
  ) {
    this.timers = options.timers ?? systemTimers;
    this.clock = new EngineClock(db, this.timers);
    this.logThrottle = options.logThrottle ?? new LogThrottle(10_000, this.timers.now);
    this.backoff = new LoopBackoff({ name: 'sequence engine', logger: options.logger, throttle: this.logThrottle, ...options.backoff });
    this.batchSize = options.batchSize ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.idlePollMs = options.idlePollMs ?? 1_000;
  }

  start(): void {
    this.running = true;
    this.unsubscribe = onDueWork(() => this.wake());
    void this.loop();
  }

  private async loop(): Promise<void> {
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    const { claimed, retryInMs } = await this.tick();
    if (this.stopped) return;
    // A full batch: there is more, look again at once. Otherwise sleep until the next due time.
    const delay = retryInMs ?? (claimed >= this.batchSize ? 0 : await this.untilNextDue());
    if (this.stopped) return;
    this.timer = this.timers.setTimeout(() => void this.loop(), delay);
  }

  private async untilNextDue(): Promise<number> {
    try {
      const next = await nextDueAt(this.db);
      if (!next) return this.idlePollMs;
      return Math.max(0, Math.min(this.idlePollMs, next.getTime() - this.clock.now().getTime()));
    } catch (error) {
      return this.backoff.failed(error);
    }
  }

  // Work became due in this process: look now, unless a pass is under way (it loops again at
  // once when it found work) or the database is failing (the backoff decides then).
  private wake(): void {
    if (!this.running || this.stopped || this.ticking || this.timer === undefined || this.backoff.failing) return;
    this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => void this.loop(), 0);
  }

  // One pass, and the webhook requests it began: how many runs it claimed. Tests and the
  // benchmark drive the engine with it.
  async runOnce(): Promise<number> {
    const { claimed, retryInMs } = await this.tick();
    await this.settled();
    if (retryInMs !== undefined) throw new Error('the engine pass failed (see the log)');
    return claimed;
  }

  // Passes until nothing is due now (by the engine's clock).
  async runUntilIdle(maxPasses = 1_000): Promise<number> {
    let total = 0;
    for (let pass = 0; pass < maxPasses; pass += 1) {
      const claimed = await this.runOnce();
      if (claimed === 0) return total;
      total += claimed;
    }
    throw new Error(`still work due after ${maxPasses} passes`);
  }

  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  // Stops claiming; waits up to boundMs (real time: it holds a process's exit) for the webhook
  // requests in flight, then aborts the rest: their runs are handed back, due now.
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.timers.clearTimeout(this.timer);
    await this.ticking;
    if (await settleWithin(this.settled(), boundMs)) {
      this.abort.abort();
      await this.settled();
    }
  }

  private async tick(): Promise<{ claimed: number; retryInMs?: number }> {
    if (this.ticking) {
      await this.ticking;
      return { claimed: 0 };
    }
    const pass = this.pass().then(
      (claimed) => {
        this.backoff.succeeded();
        return { claimed };
      },
      (error: unknown) => ({ claimed: 0, retryInMs: this.backoff.failed(error) }),
    );
    this.ticking = pass;
    try {
      return await pass;
    } finally {
      this.ticking = undefined;
    }
  }

  private async pass(): Promise<number> {
    const maxInFlight = this.options.webhook.maxInFlight ?? 1_024;
    // The pass's time is the database's: what it claims, plans and records counts from the
    // clock the leases are counted from (engine-clock.ts).
    const now = await this.clock.read();
    const claim = await claimDueRuns(this.db, now, {
      limit: this.batchSize,
      leaseMs: this.leaseMs,
      cursor: this.claimCursor,
      deadLetterAfter: this.options.deadLetterAfter,
    });
    this.claimCursor = claim.cursor;
    this.reportDeadLetters(claim.deadLettered);
    if (claim.runs.length === 0) return claim.deadLettered.length;
    for (const { dueAt } of claim.runs) this.options.metrics?.lagSeconds.observe(Math.max(0, now.getTime() - dueAt.getTime()) / 1000);
    const runs = await loadClaimedRuns(this.db, claim);
    await this.dropVanished(claim, runs.length);
    // One run at a time: a run this version cannot plan or record fails alone.
    const { local, webhooks, unplannable } = await planBatch(this.db, runs, now);
    this.options.metrics?.unprocessable?.inc({ stage: 'plan' }, unplannable.length);
    for (const { run, reason } of unplannable) {
      this.options.logger.warn({ runId: run.id, accountId: run.accountId, sequenceId: run.sequenceId, version: run.version, reason }, 'a run could not be planned: it failed alone');
    }
    this.count(await this.record(local, now));
    // Webhook steps beyond the free request slots are handed back, due at the next look: the
    // slots bound this process's requests, never the other runs' steps.
    const over = webhooks.splice(Math.max(0, maxInFlight - this.inFlightRuns));
    await releaseRuns(this.db, over.map(({ run }) => run.id), claim.token, new Date(now.getTime() + this.idlePollMs));
    if (webhooks.length > 0) await this.beginWebhooks(webhooks, now);
    return claim.runs.length + claim.deadLettered.length;
  }

  private record(results: RunResult[], now: Date): Promise<StepCount[]> {
    return recordIsolated(this.db, results, now, ({ run, error, failed }) => {
      if (failed) this.options.metrics?.unprocessable?.inc({ stage: 'record' }, 1);
      this.options.logger.error(
        { err: error, runId: run.id, accountId: run.accountId, sequenceId: run.sequenceId, stepId: run.currentStepId },
        failed ? 'a run could not be recorded: it failed alone ("cannot record")' : 'a run could not be recorded, nor failed: its claim is left to run out',
      );
    });
  }

  // Each run set aside is logged, for an operator to find (docs/operations.md "Runs set aside").
  private reportDeadLetters(runs: readonly DeadLetter[]): void {
    if (runs.length === 0) return;
    this.options.metrics?.deadLettered?.inc(runs.length);
    for (const run of runs) {
      this.options.logger.error(
        { runId: run.id, accountId: run.accountId, sequenceId: run.sequenceId, expiredClaims: run.expiredClaims },
        'run dead-lettered: its claims kept running out before its outcome was recorded; set aside until paused and resumed',
      );
    }
  }

  // Begins the attempts and launches their requests. A run whose last attempt was cut short by
  // a dead worker, and was its last allowed one, fails its step instead (recorded at once).
  private async beginWebhooks(webhooks: WebhookWork[], now: Date): Promise<void> {
    // Their requests go 64 at a time, each bounded by the timeout: the lease covers the whole
    // queue, so that no other worker takes a run whose request is only waiting for its turn.
    const { timeoutMs, concurrency = WEBHOOK_CONCURRENCY } = this.options.webhook;
    const leaseUntil = new Date(now.getTime() + this.leaseMs + timeoutMs * Math.ceil(webhooks.length / concurrency));
    const { begun, exhausted, counts } = await beginWebhookAttempts(this.db, webhooks, now, leaseUntil);
    this.count(counts);
    if (exhausted.length > 0) {
      this.count(
        await this.record(
          exhausted.map(({ run, step, steps }) => ({
            run,
            kind: 'webhook' as const,
            step,
            steps,
            attempt: { succeeded: false, reason: INTERRUPTED, detail: {}, retryAt: null, startedAt: now },
          })),
          now,
        ),
      );
    }
    this.launch(begun);
  }

  // Claimed, but no longer a run with a step to take (it ended or went in the meantime): its
  // claim is dropped, so its lease does not make it due again.
  private async dropVanished(claim: Claim, loaded: number): Promise<void> {
    if (loaded === claim.runs.length) return;
    await execute(
      this.db,
      'UPDATE sequence_runs SET due_at = NULL, claim_token = NULL WHERE id IN (?) AND claim_token = ? AND current_step_id IS NULL',
      [claim.runs.map((run) => run.id), claim.token],
    );
  }

  private launch(begun: WebhookWork[]): void {
    if (begun.length === 0) return;
    this.inFlightRuns += begun.length;
    const { webhook } = this.options;
    const work = (async () => {
      const sent = await sendWebhookAttempts(this.db, begun, {
        now: () => this.clock.now(),
        timeoutMs: webhook.timeoutMs,
        allowInsecure: webhook.allowInsecure,
        concurrency: webhook.concurrency ?? WEBHOOK_CONCURRENCY,
        signal: this.abort.signal,
        random: webhook.random,
      });
      const now = this.clock.now();
      // Stopping cut these short: not the receiver's doing. Handed back, to be sent again.
      const cut = sent.filter((item) => this.abort.signal.aborted && item.attempt.reason?.startsWith('aborted'));
      await releaseRuns(this.db, cut.map((item) => item.run.id), begun[0]!.run.token, now);
      const results: RunResult[] = sent
        .filter((item) => !cut.includes(item))
        .map(({ run, step, steps, attempt }) => ({ run, kind: 'webhook', step, steps, attempt }));
      this.count(await this.record(results, now));
    })()
      .catch((error: unknown) => {
        // Their leases expire and the steps are taken again, with the same webhook ids.
        this.logThrottle.log(this.options.logger, 'error', failureCause(error, 'sequence_webhook_step'), { err: error }, 'webhook steps failed to record');
      })
      .finally(() => {
        this.inFlight.delete(work);
        this.inFlightRuns -= begun.length;
        this.wake();
      });
    this.inFlight.add(work);
  }

  private count(counts: StepCount[]): void {
    const metrics = this.options.metrics;
    if (!metrics) return;
    const tally = new Map<string, number>();
    for (const { type, outcome } of counts) tally.set(`${type}\n${outcome}`, (tally.get(`${type}\n${outcome}`) ?? 0) + 1);
    for (const [key, value] of tally) {
      const [type, outcome] = key.split('\n') as [string, string];
      metrics.steps.inc({ type, outcome }, value);
    }
  }
}
