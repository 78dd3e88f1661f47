// The rate per account and channel: a token bucket per (account, channel), refilled at
// `perSecond` and holding at most one second's worth, on the engine's clock (tests move it).
// It bounds what this process starts; the dispatchers of other processes have their own.
// (Issue 28's email and WhatsApp senders add a limit shared across processes.)
export class RateBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: (channel: string) => number,
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
    bucket.tokens = Math.min(this.capacity(channel), bucket.tokens + count);
  }

  // When the next whole send may start.
  nextAt(accountId: string, channel: string): number {
    const bucket = this.bucket(accountId, channel);
    if (bucket.tokens >= 1) return bucket.at;
    return bucket.at + Math.ceil(((1 - bucket.tokens) / this.perSecond(channel)) * 1000);
  }

  private capacity(channel: string): number {
    return Math.max(1, this.perSecond(channel));
  }

  private bucket(accountId: string, channel: string): { tokens: number; at: number } {
    const key = `${accountId}\n${channel}`;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.capacity(channel), at: now };
      this.buckets.set(key, bucket);
    } else if (now > bucket.at) {
      bucket.tokens = Math.min(this.capacity(channel), bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond(channel));
      bucket.at = now;
    }
    return bucket;
  }
}
