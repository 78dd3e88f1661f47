// The rate per account and channel: a token bucket per (account, channel), refilled at
// `perSecond` and holding at most one second's worth, on the engine's clock (tests move it).
// It bounds what this process starts; the dispatchers of other processes have their own.
// (Email and WhatsApp senders also have a limit shared across processes, send-throttle.ts;
// their rate here is the account's, which spreads this process's sends over the second.)
export class RateBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: (accountId: string, channel: string) => number,
    private readonly now: () => number,
  ) {}

  // Whole sends that may start now.
  available(accountId: string, channel: string): number {
    return Math.floor(this.bucket(accountId, channel).tokens);
  }

  take(accountId: string, channel: string, count: number): void {
    this.bucket(accountId, channel).tokens -= count;
  }

  // Claimed fewer than taken (another dispatcher had them, their run was paused): given back.
  giveBack(accountId: string, channel: string, count: number): void {
    const bucket = this.bucket(accountId, channel);
    bucket.tokens = Math.min(this.capacity(accountId, channel), bucket.tokens + count);
  }

  // When the next whole send may start.
  nextAt(accountId: string, channel: string): number {
    const bucket = this.bucket(accountId, channel);
    if (bucket.tokens >= 1) return bucket.at;
    return bucket.at + Math.ceil(((1 - bucket.tokens) / this.perSecond(accountId, channel)) * 1000);
  }

  private capacity(accountId: string, channel: string): number {
    return Math.max(1, this.perSecond(accountId, channel));
  }

  private bucket(accountId: string, channel: string): { tokens: number; at: number } {
    const key = `${accountId}\n${channel}`;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.capacity(accountId, channel), at: now };
      this.buckets.set(key, bucket);
    } else if (now > bucket.at) {
      bucket.tokens = Math.min(this.capacity(accountId, channel), bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond(accountId, channel));
      bucket.at = now;
    }
    return bucket;
  }
}
