import path from 'node:path';
import type { ActivitySettings } from '../activities/activity-settings';
import { DEFAULT_DATA_DIR } from '../../config';
import type { Database } from '../../db/database';
import { execute } from '../../db/sql/statements';
import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../channels/channel-settings';
import { senderRates } from '../channels/sender-rates';
import type { MessageMetrics } from '../messages/message-metrics';
import { DEFAULT_SMTP_DATA_TIMEOUT_MS, DEFAULT_SMTP_TIMEOUTS, SmtpTransports, smtpAttemptBoundMs, type SmtpTimeouts } from '../messages/smtp-transports';
import { LoopBackoff } from '../background/loop-backoff';
import { settleWithin } from '../background/settle-within';
import { systemTimers, type TimerHandle, type Timers } from '../background/timers';
import { notifyDueWork, onDueWork } from '../runs/due-work';
import { EngineClock } from './engine-clock';
import { emailChannel } from './outbound/channels/email';
import { webhookChannel } from './outbound/channels/webhook';
import { whatsappChannel } from './outbound/channels/whatsapp';
import { ChannelProbes } from './outbound/channel-probes';
import { OutboundDispatcher } from './outbound/dispatcher';
import { DatabaseSendRate } from './outbound/send-rate/database-send-rate';
import type { SendRate } from './outbound/send-rate/send-rate';
import { planBatch } from './plan-batch';
import type { RunResult } from './claimed-run';
import { recordIsolated, type RecordedIsolated } from './record-isolated';
import { claimDueRuns, endLeases, loadClaimedRuns, nextDueAt, type Claim, type DeadLetter } from './run-queue';
import type { StepCount } from './step-counts';

// What the engine reports, if given (src/metrics/metrics.ts registers them).
export interface EngineMetrics {
  steps: { inc(labels: { type: string; outcome: string }, value: number): void };
  lagSeconds: { observe(value: number): void };
  // Runs failed alone because their stored data could not be planned or recorded.
  unprocessable?: { inc(labels: { stage: 'plan' | 'record' }, value: number): void };
  // Runs set aside after their claims kept running out (run-queue.ts, dead letters).
  deadLettered?: { inc(value: number): void };
}

export interface OutboundOptions {
  // Requests under way in this process, all targets together.
  maxInFlight?: number;
  // Requests under way in this process per (account, target): a receiver that hangs holds
  // these, never the others'.
  perTarget?: number;
  // Sends started per second in this process, per account and channel (the webhook step's;
  // email and WhatsApp go by each account's maxPerSecond, sendRate).
  perAccountPerSecond?: Partial<Record<string, number>>;
  // Where the email and WhatsApp throttle shared by every process counts (docs/channels.md
  // "Throttles"): Redis when the service has it, else the database (the default).
  sendRate?: SendRate;
}

export interface MessageOptions {
  settings: ChannelSettings;
  outboxDir: string;
  smtpTimeouts?: SmtpTimeouts;
  metrics?: MessageMetrics;
}

// How often the paused channels are read for a probe when none is known to be due: a pause
// another process recorded is probed within this.
const PROBE_POLL_MS = 15_000;

// How close to a part's next look (the runs', the sends') a pass takes that part too.
const SLACK_MS = 20;

export const OUTBOUND_DEFAULTS = { maxInFlight: 1_024, perTarget: 32, perAccountPerSecond: { webhook: 2_000 } };

export interface EngineOptions {
  logger: Logger;
  // The engine's clock and timers: tests move time by hand and never wait for real.
  timers?: Timers;
  // The process's log throttle (requests and the dispatcher log through it too).
  logThrottle?: LogThrottle;
  backoff?: { initialMs?: number; maxMs?: number };
  // Runs claimed at most per pass.
  batchSize?: number;
  // A claimed run (or send) is this engine's until then; a crash lets it become due again.
  leaseMs?: number;
  // The longest the engine sleeps without looking: what another process made due is found
  // within this (this process's own writes wake it at once).
  idlePollMs?: number;
  // A run is set aside after this many claims in a row whose lease ran out unrecorded.
  deadLetterAfter?: number;
  webhook: { timeoutMs: number; allowInsecure: boolean; random?: () => number };
  // Email and WhatsApp steps: the senders' settings (src/services/channels/), where messages
  // are captured without a provider (DATA_DIR/outbox), and the SMTP waits' bounds.
  messages?: MessageOptions;
  outbound?: OutboundOptions;
  metrics?: EngineMetrics;
  // The activity intake's settings: hard bounces at the send become `email.bounced`
  // activities (signals/send-bounces.ts). Absent: the defaults.
  activities?: ActivitySettings;
}

// The sequence engine: a loop over sequence_runs and the outbox (docs/sequences.md "How runs
// move"). Each pass reads the database's clock (engine-clock.ts), claims the runs that are due,
// fairly across accounts (run-queue.ts), decides what each does, one run at a time
// (plan-batch.ts, plan-run.ts, the step handlers in steps/), and records it all in one
// transaction (record-batch.ts; split down to the run that cannot be recorded,
// record-isolated.ts); then the outbound dispatcher (outbound/dispatcher.ts) starts the sends
// it may start now, fairly per account and target. Requests run outside the pass, and each
// outcome is recorded when it arrives: a slow receiver holds up no run but its own. The loop
// holds no due work itself: between passes it sleeps until the earliest due run or send (or
// idlePollMs), or until this process makes work due or frees a request slot.
export class SequenceEngine {
  private readonly timers: Timers;
  // The database's time, carried forward between reads (engine-clock.ts): every time the loop
  // compares, claims with or writes is on it; only the timers' own bookkeeping is not.
  private readonly clock: EngineClock;
  private readonly logThrottle: LogThrottle;
  private readonly backoff: LoopBackoff;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly idlePollMs: number;
  private readonly dispatcher: OutboundDispatcher;
  // The SMTP relays' pooled connections, closed when the engine stops.
  private readonly smtp: SmtpTransports;
  // The probes of paused channels (outbound/channel-probes.ts), on the engine's clock.
  private readonly probes: ChannelProbes;
  private timer: TimerHandle | undefined;
  // When the timer set fires (the engine's clock).
  private timerAt = Infinity;
  private ticking: Promise<PassResult> | undefined;
  // When the runs are next worth a claim, and whether something made them due before that.
  private runsNextAt = 0;
  private runsDirty = true;
  private wokenDuringPass = false;
  private stopped = false;
  private running = false;
  private unsubscribe: (() => void) | undefined;
  // The last pass's record, while it runs in the background (passRuns), and its failure.
  private recording: Promise<void> | undefined;
  private recordFailure: unknown;
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
    const outbound = { ...OUTBOUND_DEFAULTS, ...options.outbound };
    const rates: Partial<Record<string, number>> = { ...OUTBOUND_DEFAULTS.perAccountPerSecond, ...options.outbound?.perAccountPerSecond };
    const { webhook } = options;
    const messages = options.messages ?? { settings: DEFAULT_CHANNEL_SETTINGS, outboxDir: path.join(DEFAULT_DATA_DIR, 'outbox') };
    const smtpTimeouts = messages.smtpTimeouts ?? { ...DEFAULT_SMTP_TIMEOUTS, dataMs: DEFAULT_SMTP_DATA_TIMEOUT_MS };
    this.smtp = new SmtpTransports(smtpTimeouts, messages.settings);
    this.probes = new ChannelProbes(db, {
      settings: messages.settings,
      transports: this.smtp,
      timeoutMs: webhook.timeoutMs,
      logger: options.logger,
      pollMs: Math.max(this.idlePollMs, PROBE_POLL_MS),
      resumed: () => {
        this.dispatcher.markDirty();
        this.wake();
      },
    });
    this.dispatcher = new OutboundDispatcher(db, {
      logger: options.logger,
      logThrottle: this.logThrottle,
      now: () => this.clock.now().getTime(),
      channels: [
        webhookChannel({ timeoutMs: webhook.timeoutMs, allowInsecure: webhook.allowInsecure, now: () => this.clock.now() }),
        emailChannel({ settings: messages.settings, outboxDir: messages.outboxDir, transports: this.smtp, now: () => this.clock.now(), metrics: messages.metrics }),
        whatsappChannel({ settings: messages.settings, outboxDir: messages.outboxDir, timeoutMs: webhook.timeoutMs, now: () => this.clock.now(), metrics: messages.metrics }),
      ],
      // Well past a request's timeout: a live dispatcher's sends are never taken from it (an
      // email's, past every SMTP bound: its reply to the final dot may take 10 minutes).
      leaseMs: Math.max(this.leaseMs, 3 * webhook.timeoutMs),
      channelLeaseMs: { email: smtpAttemptBoundMs(smtpTimeouts) + 30_000 },
      idlePollMs: this.idlePollMs,
      maxInFlight: outbound.maxInFlight,
      perTarget: outbound.perTarget,
      perAccountPerSecond: (channel) => rates[channel] ?? Infinity,
      throttle: {
        sendRate: options.outbound?.sendRate ?? new DatabaseSendRate(db),
        channels: ['email', 'whatsapp'],
        rates: (channel, accountIds) => senderRates(db, channel as 'email' | 'whatsapp', accountIds, messages.settings),
      },
      random: webhook.random,
      activities: options.activities,
      wake: (lingerMs) => this.wake(lingerMs),
      recorded: ({ counts, due, messages: reached, paused, whatsapp }) => {
        this.count(counts);
        for (const labels of reached) messages.metrics?.total.inc(labels);
        if (whatsapp.optedOut > 0) messages.metrics?.whatsapp?.optOuts.inc({ source: 'send' }, whatsapp.optedOut);
        if (whatsapp.invalid > 0) messages.metrics?.whatsapp?.invalidNumbers.inc(whatsapp.invalid);
        for (const labels of paused) messages.metrics?.channelPauses?.inc(labels);
        // A channel paused here: its probe is looked for at the next pass.
        if (paused.length > 0) this.probes.soon();
        // Runs moved on to their next step: this process's engine (and only it) is told now.
        if (due) notifyDueWork();
      },
    });
  }

  start(): void {
    this.running = true;
    this.unsubscribe = onDueWork(() => {
      this.runsDirty = true;
      // (A resumed channel's sends are due too.)
      this.dispatcher.markDirty();
      this.wake();
    });
    void this.loop();
  }

  private async loop(): Promise<void> {
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.stopped) return;
    const { retryInMs, nextAt } = await this.tick(false);
    if (this.stopped) return;
    const woken = this.wokenDuringPass;
    this.wokenDuringPass = false;
    const now = this.clock.now().getTime();
    const delay = retryInMs ?? (woken ? 0 : Math.max(0, Math.min(nextAt, now + this.idlePollMs) - now));
    this.schedule(delay);
  }

  private schedule(delay: number): void {
    this.timers.clearTimeout(this.timer);
    this.timerAt = this.timers.now() + delay;
    this.timer = this.timers.setTimeout(() => void this.loop(), delay);
  }

  // Work became due in this process: look now; a request slot came free: look within lingerMs
  // (the slots freed meanwhile are claimed in that one look). Not while the database is failing
  // (the backoff decides then). During a pass, the next one follows at once. A wake never puts
  // a look off.
  private wake(lingerMs = 0): void {
    if (!this.running || this.stopped || this.backoff.failing) return;
    if (this.ticking) {
      this.wokenDuringPass = true;
      return;
    }
    if (this.timer === undefined || this.timerAt <= this.timers.now() + lingerMs) return;
    this.schedule(lingerMs);
  }

  // One pass, and the requests it began, their outcomes recorded: how many runs it claimed
  // and sends it started. Tests and the benchmark drive the engine with it.
  async runOnce(): Promise<number> {
    const { taken, retryInMs } = await this.tick(true);
    await this.recording;
    await this.dispatcher.settled();
    await this.probes.settled();
    if (retryInMs !== undefined) throw new Error('the engine pass failed (see the log)');
    return taken;
  }

  // Passes until nothing is due now (by the engine's clock).
  async runUntilIdle(maxPasses = 1_000): Promise<number> {
    let total = 0;
    for (let pass = 0; pass < maxPasses; pass += 1) {
      const taken = await this.runOnce();
      if (taken === 0) return total;
      total += taken;
    }
    throw new Error(`still work due after ${maxPasses} passes`);
  }

  async settled(): Promise<void> {
    await this.recording;
    await this.dispatcher.settled();
    await this.probes.settled();
  }

  // Stops claiming; waits up to boundMs (real time: it holds a process's exit) for the requests
  // under way, then cuts the rest short: their sends go back, due now, with their ids, and no
  // attempt is counted for them.
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.timers.clearTimeout(this.timer);
    await this.ticking;
    await this.recording;
    await this.dispatcher.stop(boundMs);
    await settleWithin(this.probes.settled(), boundMs);
    this.smtp.close();
  }

  private async tick(force: boolean): Promise<PassResult> {
    if (this.ticking) {
      await this.ticking;
      return { taken: 0, nextAt: this.clock.now().getTime() };
    }
    const pass = this.pass(force).then(
      (result) => {
        this.backoff.succeeded();
        return result;
      },
      (error: unknown) => ({ taken: 0, nextAt: this.clock.now().getTime(), retryInMs: this.backoff.failed(error) }),
    );
    this.ticking = pass;
    try {
      return await pass;
    } finally {
      this.ticking = undefined;
    }
  }

  // The runs' part, when they may have work (their next due time came, or this process made
  // work due), then the outbound part.
  private async pass(force: boolean): Promise<PassResult> {
    let now = this.clock.now().getTime();
    let claimed = 0;
    // (Within a few ms of its time is its time: the runs and the sends then keep one rhythm, not
    // two passes a few ms apart.)
    if (force || this.runsDirty || now + SLACK_MS >= this.runsNextAt) {
      // The runs' part goes by the database's time, read now: what it claims, plans and records
      // counts from the clock the leases are counted from (engine-clock.ts).
      now = (await this.clock.read()).getTime();
      const { claimed: count, sendsQueued } = await this.passRuns(new Date(now), !force);
      claimed = count;
      this.runsDirty = false;
      // A full batch: there is more, look again at once. Otherwise at the next due time.
      this.runsNextAt = claimed >= this.batchSize ? now : await this.nextDue(now);
      if (sendsQueued > 0) this.dispatcher.markDirty();
    }
    if (force) this.dispatcher.markDirty();
    const { started, nextAt } = await this.dispatcher.pass(SLACK_MS);
    const probes = await this.probes.pass(this.clock.now().getTime());
    return { taken: claimed + started + probes.started, nextAt: Math.min(this.runsNextAt, nextAt, probes.nextAt) };
  }

  // Claims, loads and plans; then records. When the batch is full (more is due) and the loop
  // runs the pass (not runOnce), it records in the background: the loop's next pass claims and
  // plans while this one records (one record at a time, each still checking its claim's token
  // under the runs' locks, record-batch.ts: the same as two engines side by side).
  private async passRuns(now: Date, overlap: boolean): Promise<{ claimed: number; sendsQueued: number }> {
    this.throwRecordFailure();
    const claim = await claimDueRuns(this.db, now, {
      limit: this.batchSize,
      leaseMs: this.leaseMs,
      cursor: this.claimCursor,
      deadLetterAfter: this.options.deadLetterAfter,
    });
    this.claimCursor = claim.cursor;
    this.reportDeadLetters(claim.deadLettered);
    if (claim.runs.length === 0) return { claimed: claim.deadLettered.length, sendsQueued: 0 };
    for (const { dueAt } of claim.runs) this.options.metrics?.lagSeconds.observe(Math.max(0, now.getTime() - dueAt.getTime()) / 1000);
    const claimed = claim.runs.length + claim.deadLettered.length;
    let results: RunResult[];
    try {
      results = await this.loadAndPlan(claim, now);
      // The previous pass's record first: its runs' next steps are then seen by this one's.
      await this.recording;
      this.throwRecordFailure();
    } catch (error) {
      await this.giveBack(claim, now);
      throw error;
    }
    const recorded = this.record(results, now).then(
      ({ counts, sendsQueued }) => {
        this.count(counts);
        return sendsQueued;
      },
      async (error: unknown) => {
        await this.giveBack(claim, now);
        throw error;
      },
    );
    // Only with more to claim (a full batch): a pass that took all that was due records at once,
    // and its sends start in this same pass.
    if (!overlap || claim.runs.length < this.batchSize) return { claimed, sendsQueued: await recorded };
    const background: Promise<void> = recorded.then(
      (sendsQueued) => {
        if (sendsQueued > 0) this.dispatcher.markDirty();
        // What it made due (the next steps) is looked for at once.
        this.runsDirty = true;
      },
      (error: unknown) => {
        this.recordFailure = error;
      },
    ).finally(() => {
      if (this.recording === background) this.recording = undefined;
      this.wake();
    });
    this.recording = background;
    return { claimed, sendsQueued: 0 };
  }

  // A pass that cannot record gives its claims back now, for the next pass (this process's or
  // another's) to take: the lease is for a process that died, not one that failed.
  private async giveBack(claim: Claim, now: Date): Promise<void> {
    await endLeases(this.db, claim.runs.map((run) => run.id), claim.token, now).catch(() => undefined);
  }

  // A record in the background that failed fails the pass that comes after it (the loop's
  // backoff and its log line, as for a pass that failed itself).
  private throwRecordFailure(): void {
    if (this.recordFailure === undefined) return;
    const error = this.recordFailure;
    this.recordFailure = undefined;
    throw error;
  }

  private async loadAndPlan(claim: Claim, now: Date): Promise<RunResult[]> {
    const runs = await loadClaimedRuns(this.db, claim);
    await this.dropVanished(claim, runs.length);
    // One run at a time: a run this version cannot plan or record fails alone.
    const { results, unplannable } = await planBatch(this.db, runs, now);
    this.options.metrics?.unprocessable?.inc({ stage: 'plan' }, unplannable.length);
    for (const { run, reason } of unplannable) {
      this.options.logger.warn({ runId: run.id, accountId: run.accountId, sequenceId: run.sequenceId, version: run.version, reason }, 'a run could not be planned: it failed alone');
    }
    return results;
  }

  private record(results: RunResult[], now: Date): Promise<RecordedIsolated> {
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

  // When the runs are next due, at most idlePollMs away (another process may make work due).
  private async nextDue(now: number): Promise<number> {
    const next = await nextDueAt(this.db);
    // Due already, after a claim that took every claimable run: what is left is leased (to this
    // process, whose record wakes it, or to another) or locked by a writer; looked at again within
    // idlePollMs, not at once over and over.
    if (!next || next.getTime() <= now) return now + this.idlePollMs;
    return Math.min(now + this.idlePollMs, next.getTime());
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

interface PassResult {
  // Runs claimed and sends started.
  taken: number;
  // When the engine wants to look next (its clock).
  nextAt: number;
  // The pass failed: wait this long.
  retryInMs?: number;
}
