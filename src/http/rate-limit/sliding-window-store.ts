import type { IncrementResponse, Options, Store } from 'express-rate-limit';
import { ServiceUnavailableError } from '../../errors';

// A rolling window (CONTRACT.md "Rate limits": 120 requests per rolling minute), where
// express-rate-limit's own stores count fixed windows. A sliding log: each accepted request's
// time is kept for one window. A request over the limit is not recorded, so a client that
// keeps calling while limited is let in again as soon as its oldest request leaves the window,
// and that moment is the reset time (and so Retry-After).

export interface SlidingLog {
  // Records a hit at the log's current time unless `limit` hits are already in the window.
  // Returns the hits in the window (limit + 1 when refused) and the oldest hit's time (ms).
  hit(key: string, windowMs: number, limit: number): Promise<{ hits: number; oldestMs: number }>;
  removeNewest(key: string): Promise<void>;
  reset(key: string): Promise<void>;
  shutdown?(): Promise<void> | void;
  readonly shared: boolean;
}

export class RateLimitUnavailableError extends ServiceUnavailableError {
  constructor(cause: unknown) {
    super('Rate limiting is unavailable; retry shortly', { cause });
  }
}

export class SlidingWindowStore implements Store {
  private windowMs = 60_000;
  private limit = 120;

  constructor(
    private readonly log: SlidingLog,
    readonly prefix: string,
  ) {}

  get localKeys() {
    return !this.log.shared;
  }

  init(options: Options) {
    this.windowMs = options.windowMs;
    if (typeof options.limit === 'number') this.limit = options.limit;
  }

  async increment(key: string): Promise<IncrementResponse> {
    try {
      const { hits, oldestMs } = await this.log.hit(this.prefix + key, this.windowMs, this.limit);
      return { totalHits: hits, resetTime: new Date(oldestMs + this.windowMs) };
    } catch (error) {
      // express-rate-limit passes this to the error handler: 503, not a silent pass.
      throw new RateLimitUnavailableError(error);
    }
  }

  async decrement(key: string) {
    await this.log.removeNewest(this.prefix + key);
  }

  async resetKey(key: string) {
    await this.log.reset(this.prefix + key);
  }

  async shutdown() {
    await this.log.shutdown?.();
  }
}

// One process's log. Expired entries are dropped on every hit and by a sweep once a window.
export class MemorySlidingLog implements SlidingLog {
  readonly shared = false;
  private readonly hits = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), windowMs);
    this.sweeper.unref();
  }

  async hit(key: string, windowMs: number, limit: number) {
    const now = this.now();
    const times = (this.hits.get(key) ?? []).filter((t) => t > now - windowMs);
    const accepted = times.length < limit;
    if (accepted) times.push(now);
    this.hits.set(key, times);
    return { hits: accepted ? times.length : limit + 1, oldestMs: times[0] };
  }

  async removeNewest(key: string) {
    this.hits.get(key)?.pop();
  }

  async reset(key: string) {
    this.hits.delete(key);
  }

  shutdown() {
    clearInterval(this.sweeper);
  }

  private sweep() {
    const cutoff = this.now() - this.windowMs;
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= cutoff) this.hits.delete(key);
    }
  }
}
