import { createHash } from 'node:crypto';

// The service's rolling per-key limit (README "Rate limits"): the time of each accepted
// request is kept for one window; a request is let in while fewer than `limit` are in it. The
// same bookkeeping in O(1) per hit (a queue of times, read from its head), and the same
// IETF draft-8 headers as express-rate-limit writes them, partition key included (computed
// once per key, not once per response).

interface KeyLog {
  times: number[];
  head: number;
  partitionKey: string;
}

export interface Verdict {
  allowed: boolean;
  headers: [string, string][];
  retryAfterSeconds: number;
}

export class RollingLimit {
  private readonly logs = new Map<string, KeyLog>();
  private readonly windowSeconds: number;

  constructor(
    private readonly name: string,
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {
    this.windowSeconds = Math.ceil(windowMs / 1000);
    setInterval(() => this.sweep(), windowMs).unref();
  }

  hit(key: string, now = Date.now()): Verdict {
    let log = this.logs.get(key);
    if (!log) {
      log = { times: [], head: 0, partitionKey: partitionKey(key) };
      this.logs.set(key, log);
    }
    const cutoff = now - this.windowMs;
    while (log.head < log.times.length && log.times[log.head] <= cutoff) log.head += 1;
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
    const allowed = log.times.length - log.head < this.limit;
    if (allowed) log.times.push(now);
    const hits = allowed ? log.times.length - log.head : this.limit + 1;
    const resetSeconds = Math.max(0, Math.ceil((log.times[log.head] + this.windowMs - now) / 1000));
    return {
      allowed,
      retryAfterSeconds: resetSeconds,
      headers: [
        ['RateLimit', `"${this.name}"; r=${Math.max(this.limit - hits, 0)}; t=${resetSeconds}`],
        ['RateLimit-Policy', `"${this.name}"; q=${this.limit}; w=${this.windowSeconds}; pk=:${log.partitionKey}:`],
      ],
    };
  }

  private sweep() {
    const cutoff = Date.now() - this.windowMs;
    for (const [key, log] of this.logs) {
      if ((log.times.at(-1) ?? 0) <= cutoff) this.logs.delete(key);
    }
  }
}

// express-rate-limit's `pk`: the first 12 hex digits of the key's SHA-256, in base64.
function partitionKey(key: string): string {
  return Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
}
