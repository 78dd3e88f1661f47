import type { SendGroup } from '../../runs/outbox';
import type { Share } from './send-shares';
import type { SendRate } from './send-rate/send-rate';

// The dispatcher's use of the shared throttle (send-rate/send-rate.ts; docs/channels.md
// "Throttles"): for the channels that have one (email, WhatsApp), a look reserves, per account
// and channel, what its share would start, out of the account's `maxPerSecond` for the current
// second of the engine's clock; it starts only what was granted, and gives back what the claim
// did not use. A sender held back waits until the second it may start in (its retryAt): its
// sends stay queued, never dropped. The webhook channel keeps its per-process bucket only.

export interface ThrottleOptions {
  sendRate: SendRate;
  // The channels it holds, and how their accounts' rates are read (services/channels/
  // sender-rates.ts: the account's setting capped by the server-wide limit).
  channels: readonly string[];
  rates: (channel: string, accountIds: readonly string[]) => Promise<Map<string, number>>;
  // A store that cannot answer starts nothing of the senders it holds: logged, and looked at
  // again after idlePollMs.
  failed: (error: unknown) => void;
}

// A rate read serves this long (engine clock): a change of an account's setting applies within it.
const RATES_FRESH_MS = 1_000;
// Reservations made at once (each is a short transaction on the database's store).
const PARALLEL = 8;

type Pick = Share['picks'][number];

export interface Reserved {
  accountId: string;
  channel: string;
  granted: number;
  // The second it was granted in: a release counts against that second only.
  at: number;
}

export class SendThrottle {
  private readonly rates = new Map<string, { perSecond: number; at: number }>();
  private readonly held: Set<string>;

  constructor(private readonly options: ThrottleOptions) {
    this.held = new Set(options.channels);
  }

  holds(channel: string): boolean {
    return this.held.has(channel);
  }

  // The rate in force for an account's channel, once read (refresh); undefined before.
  rateOf(accountId: string, channel: string): number | undefined {
    return this.rates.get(rateKey(accountId, channel))?.perSecond;
  }

  // Reads the rates of the held senders among these groups not read lately: one statement per
  // channel.
  async refresh(groups: readonly SendGroup[], now: number): Promise<void> {
    const stale = new Map<string, Set<string>>();
    for (const group of groups) {
      if (!this.held.has(group.channel)) continue;
      const known = this.rates.get(rateKey(group.accountId, group.channel));
      if (known && now - known.at < RATES_FRESH_MS) continue;
      const accounts = stale.get(group.channel) ?? new Set<string>();
      accounts.add(group.accountId);
      stale.set(group.channel, accounts);
    }
    for (const [channel, accounts] of stale) {
      const read = await this.options.rates(channel, [...accounts]);
      for (const [accountId, perSecond] of read) this.rates.set(rateKey(accountId, channel), { perSecond, at: now });
    }
  }

  // The picks cut to what the shared throttle grants (picks of other channels as they were),
  // what was reserved, and the earliest time a sender held back may start again.
  async reserve(picks: readonly Pick[], now: number): Promise<{ picks: Pick[]; reserved: Reserved[]; wakeAt: number | null }> {
    const wanted = new Map<string, { accountId: string; channel: string; want: number }>();
    for (const { group, limit } of picks) {
      if (!this.held.has(group.channel)) continue;
      const key = rateKey(group.accountId, group.channel);
      const entry = wanted.get(key) ?? { accountId: group.accountId, channel: group.channel, want: 0 };
      entry.want += limit;
      wanted.set(key, entry);
    }
    if (wanted.size === 0) return { picks: [...picks], reserved: [], wakeAt: null };
    const grants = new Map<string, number>();
    const reserved: Reserved[] = [];
    let wakeAt: number | null = null;
    const entries = [...wanted];
    for (let i = 0; i < entries.length; i += PARALLEL) {
      await Promise.all(
        entries.slice(i, i + PARALLEL).map(async ([key, { accountId, channel, want }]) => {
          const perSecond = this.rateOf(accountId, channel);
          // Not read (its read failed): nothing starts for it in this look.
          if (perSecond === undefined) return;
          try {
            const { granted, retryAt } = await this.options.sendRate.reserve(accountId, channel, want, perSecond, now);
            grants.set(key, granted);
            if (granted > 0) reserved.push({ accountId, channel, granted, at: now });
            if (granted < want) wakeAt = wakeAt === null ? retryAt : Math.min(wakeAt, retryAt);
          } catch (error) {
            this.options.failed(error);
          }
        }),
      );
    }
    const cut: Pick[] = [];
    for (const pick of picks) {
      if (!this.held.has(pick.group.channel)) {
        cut.push(pick);
        continue;
      }
      const key = rateKey(pick.group.accountId, pick.group.channel);
      const left = grants.get(key) ?? 0;
      const limit = Math.min(pick.limit, left);
      grants.set(key, left - limit);
      if (limit > 0) cut.push({ ...pick, limit, quantumBound: pick.quantumBound && limit === pick.limit });
    }
    return { picks: cut, reserved, wakeAt };
  }

  // Gives back what was reserved and not started (the claim found fewer sends due than the
  // groups read said, or another dispatcher took them). A failure only costs this second's
  // share of that sender: logged, not thrown.
  async release(reserved: readonly Reserved[], started: (accountId: string, channel: string) => number): Promise<void> {
    const unused = reserved.filter(({ accountId, channel, granted }) => granted > started(accountId, channel));
    for (let i = 0; i < unused.length; i += PARALLEL) {
      await Promise.all(
        unused.slice(i, i + PARALLEL).map(async ({ accountId, channel, granted, at }) => {
          try {
            await this.options.sendRate.release(accountId, channel, granted - started(accountId, channel), at);
          } catch (error) {
            this.options.failed(error);
          }
        }),
      );
    }
  }
}

function rateKey(accountId: string, channel: string): string {
  return `${accountId}\n${channel}`;
}
