import { setMaxListeners } from 'node:events';
import type { Database } from '../../../db/database';
import type { LogThrottle } from '../../../logging/log-throttle';
import type { Logger } from '../../../logging/logger';
import { failureCause } from '../../background/failure-cause';
import { settleWithin } from '../../background/settle-within';
import type { Channel, Send } from './channels/channel';
import { groupKey, shareOut } from './send-shares';
import { claimSends, sendGroups, type ClaimedSend, type SendGroup } from './outbox';
import { RateBuckets } from './rate-buckets';
import { recordOutcomes, type Outcome, type Recorded } from './record-outcomes';
import { SendThrottle, type ThrottleOptions } from './send-throttle';

export interface DispatcherOptions {
  logger: Logger;
  logThrottle: LogThrottle;
  // The engine's clock (the database's time carried forward, engine-clock.ts): due times, lease
  // ends and the rates go by it; tests move it.
  now: () => number;
  channels: readonly Channel[];
  // A claimed send is this dispatcher's until then; a crash lets it be taken again. Per channel
  // where a channel's send can take longer (an email waits up to SMTP_DATA_TIMEOUT_MS).
  leaseMs: number;
  channelLeaseMs?: Partial<Record<string, number>>;
  // The longest it goes without looking: what another process queued is found within this.
  idlePollMs: number;
  // Requests under way in this process, all targets together, and per (account, target).
  maxInFlight: number;
  perTarget: number;
  // Sends started per second, per account and channel (in this process), for the channels
  // without a throttle of their own (the webhook step's).
  perAccountPerSecond: (channel: string) => number;
  // The channels whose sends start within each account's own rate, shared by every process
  // (email, WhatsApp: send-throttle.ts). Without it, every channel has only the bucket above.
  throttle?: Omit<ThrottleOptions, 'failed'>;
  random?: () => number;
  // Something the loop should look at soon: a slot came free, or an outcome was recorded. The
  // loop lingers a moment (LINGER_MS) so that the slots coming free together are claimed in one
  // look, not one look each.
  wake: (lingerMs: number) => void;
  recorded: (recorded: Recorded) => void;
}

// How long a look waits after a request ends for others to end with it, and how long the groups
// with due sends, once read, serve looks made because slots came free (new sends queued by this
// process make the next look read them again; other processes' are found within this).
const LINGER_MS = 2;
const GROUPS_FRESH_MS = 100;

// The outbound layer's dispatcher (docs/architecture.md "The outbound layer"): each look claims
// the sends it may start now, fairly (send-shares.ts), and starts their requests; each request's
// outcome is recorded when it arrives, never when others end (record-outcomes.ts). A look with
// nothing it may start sends no statement until the next due send, the next token of a rate
// that holds one back, a slot coming free, or idlePollMs: nothing spins. The engine's loop
// calls pass() (engine.ts); the dispatcher holds no timer of its own.
export class OutboundDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perTargetCount = new Map<string, number>();
  private readonly buckets: RateBuckets;
  private readonly throttle: SendThrottle | undefined;
  private readonly recorder: OutcomeRecorder;
  private readonly abort = new AbortController();
  private cursor: string | undefined;
  private nextLookAt = 0;
  private dirty = true;
  private groups: { queued: SendGroup[]; leaseEnds: Date | null; at: number } | undefined;
  private groupsStale = true;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly options: DispatcherOptions,
  ) {
    // One listener per request under way (send-request.ts removes it when the request ends):
    // up to maxInFlight at once, not a leak.
    setMaxListeners(0, this.abort.signal);
    this.throttle = options.throttle
      ? new SendThrottle({ ...options.throttle, failed: (error) => this.logThrottle('error', error, 'the send throttle could not answer: its senders wait') })
      : undefined;
    // A held channel's bucket goes at its account's rate (read before each share, refresh()).
    this.buckets = new RateBuckets(
      (accountId, channel) => (this.throttle?.holds(channel) ? (this.throttle.rateOf(accountId, channel) ?? 1) : options.perAccountPerSecond(channel)),
      options.now,
    );
    // Sends queued again (retries, interrupted ones): the groups read are stale.
    this.recorder = new OutcomeRecorder(db, options, () => {
      this.groupsStale = true;
    });
  }

  // Sends were queued in this process: the next pass looks, and reads the groups again.
  markDirty(): void {
    this.dirty = true;
    this.groupsStale = true;
  }

  // One look: answers how many sends it started (or took back from a dead dispatcher) and
  // when it wants to look again (a time on the engine's clock). slackMs: a look due that soon
  // is made now.
  async pass(slackMs = 0): Promise<{ started: number; nextAt: number }> {
    const now = this.options.now();
    if (this.stopped || (!this.dirty && now + slackMs < this.nextLookAt)) return { started: 0, nextAt: this.stopped ? Infinity : this.nextLookAt };
    this.dirty = false;
    try {
      return await this.look(now);
    } catch (error) {
      // The engine's backoff decides when the next pass comes; that one looks.
      this.dirty = true;
      throw error;
    }
  }

  private async look(now: number): Promise<{ started: number; nextAt: number }> {
    if (this.groupsStale || !this.groups || now - this.groups.at >= GROUPS_FRESH_MS) {
      this.groups = { ...(await sendGroups(this.db)), at: now };
      this.groupsStale = false;
    }
    const { queued, leaseEnds } = this.groups;
    await this.throttle?.refresh(queued, now);
    const share = shareOut({
      groups: queued,
      now,
      cursor: this.cursor,
      free: this.options.maxInFlight - this.inFlight.size,
      perTarget: this.options.perTarget,
      inFlight: (key) => this.perTargetCount.get(key) ?? 0,
      tokens: (group) => this.buckets.available(group.accountId, group.channel),
      nextTokenAt: (group) => this.buckets.nextAt(group.accountId, group.channel),
    });
    // The shared throttle cuts the picks of its channels to what this second has left; a sender
    // held back is looked at again when the next second begins.
    const throttled = this.throttle ? await this.throttle.reserve(share.picks, now) : { picks: share.picks, reserved: [], wakeAt: null };
    const picks = throttled.picks;
    let wakeAt = share.wakeAt;
    if (throttled.wakeAt !== null) wakeAt = wakeAt === null ? throttled.wakeAt : Math.min(wakeAt, throttled.wakeAt);
    const takeInterrupted = leaseEnds !== null && leaseEnds.getTime() <= now;
    let started = 0;
    let more = false;
    if (picks.length > 0 || takeInterrupted) {
      for (const { group, limit } of picks) this.buckets.take(group.accountId, group.channel, limit);
      let claim: Awaited<ReturnType<typeof claimSends>>;
      try {
        const { leaseMs, channelLeaseMs } = this.options;
        claim = await claimSends(this.db, new Date(now), picks, { leaseMs: (channel) => Math.max(leaseMs, channelLeaseMs?.[channel] ?? 0), takeInterrupted });
      } catch (error) {
        await this.throttle?.release(throttled.reserved, () => 0);
        throw error;
      }
      const sentPerGroup = new Map<string, number>();
      for (const send of claim.sending) sentPerGroup.set(groupKey(send), (sentPerGroup.get(groupKey(send)) ?? 0) + 1);
      for (const { group, key, limit } of picks) {
        const unused = limit - (sentPerGroup.get(key) ?? 0);
        if (unused > 0) this.buckets.giveBack(group.accountId, group.channel, unused);
      }
      if (throttled.reserved.length > 0) {
        const startedPerSender = new Map<string, number>();
        for (const send of claim.sending) startedPerSender.set(`${send.accountId}\n${send.channel}`, (startedPerSender.get(`${send.accountId}\n${send.channel}`) ?? 0) + 1);
        await this.throttle!.release(throttled.reserved, (accountId, channel) => startedPerSender.get(`${accountId}\n${channel}`) ?? 0);
      }
      // A group that gave fewer than asked has nothing more due now (or another dispatcher
      // holds it): the groups read are stale; the next look reads them again.
      if (picks.some(({ key, limit }) => (sentPerGroup.get(key) ?? 0) < limit) || claim.interrupted.length > 0) this.groupsStale = true;
      this.cursor = share.cursor;
      // Look again at once only where this look left startable work: a group cut to its even
      // share, sends set aside instead of sent, more interrupted ones than one look takes.
      more =
        picks.some(({ key, limit, quantumBound }) => quantumBound && sentPerGroup.get(key) === limit) ||
        claim.held + claim.cancelled > 0 ||
        claim.interrupted.length >= 100;
      for (const send of claim.interrupted) this.recorder.add({ kind: 'interrupted', send });
      await this.launch(claim.sending);
      started = claim.sending.length + claim.interrupted.length;
    }
    const idle = now + this.options.idlePollMs;
    const leaseAt = leaseEnds && leaseEnds.getTime() > now ? leaseEnds.getTime() : idle;
    this.nextLookAt = more ? now : Math.min(idle, wakeAt ?? idle, leaseAt);
    return { started, nextAt: this.nextLookAt };
  }

  // The requests begun, and the outcomes recorded.
  async settled(): Promise<void> {
    while (this.inFlight.size > 0 || this.recorder.busy) {
      await Promise.all(this.inFlight.values());
      await this.recorder.settled();
    }
  }

  // Stops starting; waits up to boundMs (real time: it holds a process's exit) for the requests
  // under way, then cuts the rest short: they go back with their ids, not counted as attempts.
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    if (await settleWithin(Promise.all(this.inFlight.values()), boundMs)) {
      this.abort.abort();
      await Promise.all(this.inFlight.values());
    }
    await this.recorder.settled();
  }

  private async launch(sends: readonly ClaimedSend[]): Promise<void> {
    for (const channel of this.options.channels) {
      const ofChannel = sends.filter((send) => send.channel === channel.name);
      if (ofChannel.length === 0) continue;
      let send: Send;
      try {
        send = await channel.load(this.db, ofChannel);
      } catch (error) {
        // Their leases end, and they are taken again with their ids (as interrupted ones).
        this.logThrottle('error', error, 'outbound sends could not start');
        continue;
      }
      for (const claimed of ofChannel) this.start(claimed, send);
    }
  }

  private start(claimed: ClaimedSend, send: Send): void {
    const key = groupKey(claimed);
    this.perTargetCount.set(key, (this.perTargetCount.get(key) ?? 0) + 1);
    const { now } = this.options;
    const startedAt = new Date(now());
    const work = send(claimed, this.abort.signal)
      .then((result) => this.recorder.add({ kind: 'answered', send: claimed, result, startedAt, finishedAt: new Date(now()) }))
      .catch((error: unknown) => this.logThrottle('error', error, 'an outbound send failed'))
      .finally(() => {
        this.inFlight.delete(claimed.id);
        const left = (this.perTargetCount.get(key) ?? 1) - 1;
        if (left === 0) this.perTargetCount.delete(key);
        else this.perTargetCount.set(key, left);
        this.dirty = true;
        this.options.wake(LINGER_MS);
      });
    this.inFlight.set(claimed.id, work);
  }

  private logThrottle(level: 'error', error: unknown, message: string): void {
    this.options.logThrottle.log(this.options.logger, level, failureCause(error, 'outbound'), { err: error }, message);
  }
}

// Writes outcomes as they come: one transaction for those that arrived while the previous one
// was being written, so a fast receiver's outcome waits at most for one record, never for a
// slow receiver's request.
class OutcomeRecorder {
  private readonly queue: Outcome[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: DispatcherOptions,
    private readonly requeued: () => void,
  ) {}

  get busy(): boolean {
    return this.writing !== undefined;
  }

  add(outcome: Outcome): void {
    this.queue.push(outcome);
    this.writing ??= this.drain();
  }

  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, 500);
        try {
          await this.record(batch);
        } catch {
          // One outcome that cannot be recorded must not keep the others from it: each alone.
          for (const outcome of batch) {
            try {
              await this.record([outcome]);
            } catch (error) {
              // Its lease ends and it is taken again, with its id (recorded as interrupted).
              this.options.logThrottle.log(this.options.logger, 'error', failureCause(error, 'outbound'), { err: error, sendId: outcome.send.id }, 'an outbound outcome failed to record');
            }
          }
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async record(batch: Outcome[]): Promise<void> {
    const recorded = await recordOutcomes(this.db, batch, { now: new Date(this.options.now()), random: this.options.random });
    this.options.recorded(recorded);
    if (recorded.requeued > 0) this.requeued();
    this.options.wake(LINGER_MS);
  }
}
