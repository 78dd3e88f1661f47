import { setMaxListeners } from 'node:events';
import type { Database } from '../../../db/database';
import type { LogThrottle } from '../../../logging/log-throttle';
import type { Logger } from '../../../logging/logger';
import { failureCause } from '../../background/failure-cause';
import { settleWithin } from '../../background/settle-within';
import type { Channel, Send } from './channels/channel';
import { groupKey, shareOut } from './send-shares';
import { claimSends, recheckClaimed, sendGroups, setAsideUnbegun, type ClaimedSend, type Recheck, type SendGroup } from '../../runs/outbox';
import { RateBuckets } from './rate-buckets';
import { recordOutcomes, type Outcome, type Recorded } from './record-outcomes';
import { DEFAULT_ACTIVITY_SETTINGS, type ActivitySettings } from '../../activities/activity-settings';
import { recordSendBounces } from '../../signals/send-bounces';
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
  // The intake's settings: hard bounces at the send are recorded as `email.bounced` activities
  // after their outcome commits (signals/send-bounces.ts). Absent: the defaults.
  activities?: ActivitySettings;
}

// How long a look waits after a request ends for others to end with it, and how long the groups
// with due sends, once read, serve looks made because slots came free (new sends queued by this
// process make the next look read them again; other processes' are found within this).
const LINGER_MS = 2;
const GROUPS_FRESH_MS = 100;
// Outcomes of lingering channels recorded together once this many wait (or their linger ended).
const RECORD_BATCH = 100;

interface Waiting {
  claimed: ClaimedSend;
  send: Send;
  claimedAt: number;
}

// The outbound layer's dispatcher (docs/architecture.md "The outbound layer"): each look claims
// the sends it may start now, fairly (send-shares.ts), and starts their requests; each request's
// outcome is recorded when it arrives, never when others end (record-outcomes.ts). A look with
// nothing it may start sends no statement until the next due send, the next token of a rate
// that holds one back, a slot coming free, or idlePollMs: nothing spins. The engine's loop
// calls pass() (engine.ts); the dispatcher holds no timer of its own.
export class OutboundDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perTargetCount = new Map<string, number>();
  // Sends claimed ahead (Channel.claimAhead), per group, in their claim's order: each starts as
  // one of its group's ends.
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingTotal = 0;
  // Waiting sends whose turn came, read again before they begin (recheck()): one statement for
  // all those whose turn came while the previous read was under way. Their slots are theirs.
  private readonly checking: Waiting[] = [];
  private readonly checkingPerKey = new Map<string, number>();
  private check: Promise<void> | undefined;
  // Sends under way or waiting, per channel (the recorder lingers only for a channel that has some).
  private readonly pendingPerChannel = new Map<string, number>();
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
    this.recorder = new OutcomeRecorder(
      db,
      options,
      () => {
        this.groupsStale = true;
      },
      (channel) => this.channel(channel)?.recordLingerMs ?? 0,
      (channel) => (this.pendingPerChannel.get(channel) ?? 0) > 0,
    );
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
      free: this.options.maxInFlight - this.inFlight.size - this.waitingTotal - this.checkingTotal(),
      perTarget: (group) => this.options.perTarget + (this.channel(group.channel)?.claimAhead?.sends ?? 0),
      inFlight: (key) => this.busy(key) + (this.waiting.get(key)?.length ?? 0),
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
    while (this.inFlight.size > 0 || this.recorder.busy || this.waitingTotal > 0 || this.check) {
      await this.check;
      await Promise.all(this.inFlight.values());
      await this.recorder.settled();
    }
  }

  // Stops starting; waits up to boundMs (real time: it holds a process's exit) for the requests
  // under way, then cuts the rest short: they go back with their ids, not counted as attempts.
  async stop(boundMs: number): Promise<void> {
    this.stopped = true;
    // Claimed ahead and not begun: back at once, with their ids.
    for (const key of [...this.waiting.keys()]) this.startWaiting(key);
    // A read under way before its sends begin: they go back too.
    await this.check;
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
      const claimedAt = this.options.now();
      for (const claimed of ofChannel) {
        this.pendingPerChannel.set(claimed.channel, (this.pendingPerChannel.get(claimed.channel) ?? 0) + 1);
        const key = groupKey(claimed);
        if (this.busy(key) < this.options.perTarget) {
          this.start(claimed, send);
          continue;
        }
        const queue = this.waiting.get(key);
        if (queue) queue.push({ claimed, send, claimedAt });
        else this.waiting.set(key, [{ claimed, send, claimedAt }]);
        this.waitingTotal += 1;
      }
    }
  }

  private channel(name: string): Channel | undefined {
    return this.options.channels.find((channel) => channel.name === name);
  }

  // Requests of the group under way, and waiting sends of it being read again before they begin.
  private busy(key: string): number {
    return (this.perTargetCount.get(key) ?? 0) + (this.checkingPerKey.get(key) ?? 0);
  }

  private checkingTotal(): number {
    let total = 0;
    for (const n of this.checkingPerKey.values()) total += n;
    return total;
  }

  // A send of the group ended: its waiting sends take the group's free slots, and are read
  // again before they begin (recheck()). One claimed too long ago to begin within its lease
  // (claimAhead.startWithinMs), or any once the dispatcher stops, goes back, due now, with its
  // id (an abandoned attempt: not counted).
  private startWaiting(key: string): void {
    const queue = this.waiting.get(key);
    while (queue && queue.length > 0 && (this.stopped || this.busy(key) < this.options.perTarget)) {
      const next = queue.shift()!;
      this.waitingTotal -= 1;
      const within = this.channel(next.claimed.channel)?.claimAhead?.startWithinMs ?? Infinity;
      if (this.stopped || this.options.now() - next.claimedAt > within) {
        this.handBack(next);
        continue;
      }
      this.checking.push(next);
      this.checkingPerKey.set(key, (this.checkingPerKey.get(key) ?? 0) + 1);
    }
    if (queue && queue.length === 0) this.waiting.delete(key);
    this.recheck();
  }

  // Not begun: back, due now, with its id.
  private handBack(waiting: Waiting): void {
    const at = new Date(this.options.now());
    this.recorder.add({
      kind: 'answered',
      send: waiting.claimed,
      result: { ok: false, reason: 'not begun: handed back', detail: {}, final: false, abandoned: true },
      startedAt: at,
      finishedAt: at,
    });
    this.ended(waiting.claimed.channel);
  }

  // A send claimed ahead waited in this process while its run could be paused, unenrolled or
  // moved, and what was answered holds (docs/sequences.md): before the waiting sends whose turn
  // came begin, one statement reads their outbox rows and runs again (outbox.ts recheckClaimed),
  // for all those whose turn came while the previous read was under way; the ones their run no
  // longer wants are held or cancelled as the claim would (setAsideUnbegun, a transaction only
  // when there are some). A read that fails hands them back.
  private recheck(): void {
    if (this.check || this.checking.length === 0) return;
    this.check = (async () => {
      while (this.checking.length > 0) {
        const batch = this.checking.splice(0);
        let verdicts: Map<string, Recheck> | undefined;
        let beginAfterAll = new Set<string>();
        try {
          verdicts = await recheckClaimed(this.db, batch.map((waiting) => waiting.claimed));
          const aside = batch.filter((waiting) => verdicts!.get(waiting.claimed.id) === 'setAside').map((waiting) => waiting.claimed);
          if (aside.length > 0) {
            beginAfterAll = new Set((await setAsideUnbegun(this.db, aside, new Date(this.options.now()))).map((send) => send.id));
            this.groupsStale = true;
          }
        } catch (error) {
          this.logThrottle('error', error, 'outbound sends waiting for their turn could not be read again: handed back');
          verdicts = undefined;
        }
        const keys = new Set<string>();
        for (const waiting of batch) {
          const key = groupKey(waiting.claimed);
          keys.add(key);
          const left = (this.checkingPerKey.get(key) ?? 1) - 1;
          if (left === 0) this.checkingPerKey.delete(key);
          else this.checkingPerKey.set(key, left);
          const verdict = verdicts?.get(waiting.claimed.id);
          if (!this.stopped && (verdict === 'begin' || beginAfterAll.has(waiting.claimed.id))) this.start(waiting.claimed, waiting.send);
          else if (!verdicts || this.stopped) this.handBack(waiting);
          // Held or cancelled, or no longer this claim's: nothing to record here.
          else this.ended(waiting.claimed.channel);
        }
        // The slots of those that did not begin: the next waiting sends of their groups.
        for (const key of keys) this.startWaiting(key);
        this.dirty = true;
        this.options.wake(LINGER_MS);
      }
    })().finally(() => {
      this.check = undefined;
      this.recheck();
    });
  }

  private ended(channel: string): void {
    const left = (this.pendingPerChannel.get(channel) ?? 1) - 1;
    if (left === 0) this.pendingPerChannel.delete(channel);
    else this.pendingPerChannel.set(channel, left);
    this.recorder.poke();
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
        this.startWaiting(key);
        this.ended(claimed.channel);
        this.dirty = true;
        // A group still holding half of what it may claim ahead has work: no look for it yet.
        const ahead = this.channel(claimed.channel)?.claimAhead?.sends ?? 0;
        if ((this.waiting.get(key)?.length ?? 0) * 2 < ahead || ahead === 0) this.options.wake(LINGER_MS);
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
// A channel may let its outcomes linger (Channel.recordLingerMs: an email's, whose run waits for
// nothing sooner): they wait for others, up to that long (real time) or RECORD_BATCH of them,
// while more of that channel are under way; never beside another channel's outcome.
class OutcomeRecorder {
  private readonly queue: Array<{ outcome: Outcome; at: number }> = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: DispatcherOptions,
    private readonly requeued: () => void,
    private readonly lingerOf: (channel: string) => number,
    private readonly pending: (channel: string) => boolean,
  ) {}

  get busy(): boolean {
    return this.writing !== undefined || this.queue.length > 0;
  }

  add(outcome: Outcome): void {
    this.queue.push({ outcome, at: Date.now() });
    this.poke();
  }

  // Records now what need not wait, or sets the timer of the first that may.
  poke(force = false): void {
    if (this.writing || this.queue.length === 0) return;
    const waitMs = force ? 0 : this.lingerMs();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (waitMs <= 0) {
      this.writing = this.drain();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.poke(true);
    }, waitMs);
    this.timer.unref?.();
  }

  async settled(): Promise<void> {
    this.poke(true);
    while (this.writing) {
      await this.writing;
      this.poke(true);
    }
  }

  // How much longer the queue may wait: 0 if any outcome may not linger, or its channel has
  // nothing more under way, or a batch is full.
  private lingerMs(): number {
    if (this.queue.length >= RECORD_BATCH) return 0;
    let until = Infinity;
    for (const { outcome, at } of this.queue) {
      const linger = this.lingerOf(outcome.send.channel);
      if (linger <= 0 || !this.pending(outcome.send.channel)) return 0;
      until = Math.min(until, at + linger);
    }
    return until - Date.now();
  }

  private async drain(): Promise<void> {
    try {
      {
        const batch = this.queue.splice(0, 500).map(({ outcome }) => outcome);
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
      // What arrived meanwhile: now, or once it has lingered.
      this.poke();
    }
  }

  private async record(batch: Outcome[]): Promise<void> {
    const recorded = await recordOutcomes(this.db, batch, { now: new Date(this.options.now()), random: this.options.random });
    this.options.recorded(recorded);
    if (recorded.bounced.length > 0) {
      // After the commit, apart: the outcomes stand whatever becomes of their signals.
      try {
        await recordSendBounces(this.db, recorded.bounced, this.options.activities ?? DEFAULT_ACTIVITY_SETTINGS);
      } catch (error) {
        this.options.logThrottle.log(this.options.logger, 'error', failureCause(error, 'outbound'), { err: error }, 'hard bounces recorded, their email.bounced activities not');
      }
    }
    if (recorded.requeued > 0) this.requeued();
    this.options.wake(LINGER_MS);
  }
}
