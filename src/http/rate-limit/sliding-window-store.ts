import type { IncrementResponse, Options, Store } from 'express-rate-limit';
import { ServiceUnavailableError } from '../../errors/app-errors';

// A rolling window (docs/decisions.md "Rate limits": 120 requests per rolling minute), where
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

// One process's log: per key, the accepted hits' times in a ring buffer, oldest first.
//
// O(1) per hit (amortised), exact. A hit drops the expired times from the front (each time is
// dropped once, so over any run of hits the drops cost at most one per hit), compares the count
// with the limit and appends. The log it replaced filtered and copied the key's whole window on
// every hit: O(hits in the window), tens of thousands at a high limit.
//
// Why not the two-fixed-window counter (current + previous × overlap, Cloudflare's
// approximation), which is O(1) in memory too? It changes who gets in: it counts the previous
// window's hits as if spread evenly over it, so a burst at the end of that window fades out
// linearly while the next window refills (up to nearly 2× the limit in one rolling minute),
// and an early burst is counted for longer than it should; its reset time is a guess. The contract says
// "rolling minute", docs/rate-limits.md says a request is let in again when the oldest counted one is a
// minute old, and Retry-After says when: an exact log keeps all three. Its memory is bounded by
// the limit (refused hits are not recorded): at the default 120, under 1 KiB per active key.
//
// Times are expected in order; if the clock steps back, the front is dropped later than it
// could be (the limit errs on the strict side), never earlier.
export class MemorySlidingLog implements SlidingLog {
  readonly shared = false;
  private readonly logs = new Map<string, RingLog>();
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
    let log = this.logs.get(key);
    if (log === undefined) this.logs.set(key, (log = new RingLog()));
    log.dropUpTo(now - windowMs);
    if (log.count >= limit) return { hits: limit + 1, oldestMs: log.count > 0 ? log.oldest() : now };
    log.push(now);
    return { hits: log.count, oldestMs: log.oldest() };
  }

  async removeNewest(key: string) {
    this.logs.get(key)?.popNewest();
  }

  async reset(key: string) {
    this.logs.delete(key);
  }

  shutdown() {
    clearInterval(this.sweeper);
  }

  // Keys nobody has hit for a window are forgotten, so idle keys cost no memory.
  private sweep() {
    const cutoff = this.now() - this.windowMs;
    for (const [key, log] of this.logs) {
      if (log.count === 0 || log.newest() <= cutoff) this.logs.delete(key);
    }
  }
}

// A double-ended queue of times over a power-of-two Float64Array, grown by doubling.
class RingLog {
  count = 0;
  private head = 0;
  private times = new Float64Array(8);

  oldest(): number {
    return this.times[this.head];
  }

  newest(): number {
    return this.times[(this.head + this.count - 1) & (this.times.length - 1)];
  }

  dropUpTo(cutoff: number): void {
    const mask = this.times.length - 1;
    while (this.count > 0 && this.times[this.head] <= cutoff) {
      this.head = (this.head + 1) & mask;
      this.count -= 1;
    }
  }

  push(time: number): void {
    if (this.count === this.times.length) this.grow();
    this.times[(this.head + this.count) & (this.times.length - 1)] = time;
    this.count += 1;
  }

  popNewest(): void {
    if (this.count > 0) this.count -= 1;
  }

  private grow(): void {
    const grown = new Float64Array(this.times.length * 2);
    for (let i = 0; i < this.count; i += 1) grown[i] = this.times[(this.head + i) & (this.times.length - 1)];
    this.times = grown;
    this.head = 0;
  }
}
