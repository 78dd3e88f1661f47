// The throttle of messages per account and channel, shared by every process that sends
// (docs/channels.md "Throttles"): at most `perSecond` sends of one account's channel start in
// any second of the engine's clock, whatever the number of dispatchers. Each process still
// has its own token bucket (rate-buckets.ts), which spreads its sends over the second; this is
// the sum's bound. Redis keeps the count when it is configured (redis-send-rate.ts), the
// database otherwise (database-send-rate.ts).
//
// A fixed window of one second: a sender can start perSecond sends at the end of one second
// and perSecond more at the start of the next. Providers' own limits are per second or per
// minute averages, which this keeps.

export interface Reservation {
  // How many of those asked for may start now.
  granted: number;
  // When the next second begins (engine clock, ms): a sender held back looks again then.
  retryAt: number;
}

export interface SendRate {
  // Takes up to `want` of the second's `perSecond` for (account, channel). Throws when the
  // store cannot answer; the caller starts nothing then (a held-back send waits, never drops).
  reserve(accountId: string, channel: string, want: number, perSecond: number, nowMs: number): Promise<Reservation>;
  // Gives back what was reserved and not started (the claim found fewer sends due).
  release(accountId: string, channel: string, count: number, nowMs: number): Promise<void>;
}

export function windowOf(nowMs: number): { start: number; end: number } {
  const start = Math.floor(nowMs / 1000) * 1000;
  return { start, end: start + 1000 };
}
