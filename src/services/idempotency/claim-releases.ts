import type { Database } from '../../db/database';
import { withoutWriteDeadline } from '../../db/sql/write-deadline';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { failureCause } from '../background/failure-cause';
import { systemTimers, type Timers } from '../background/timers';
import { releaseIdempotencyKey } from './idempotency-keys';

export interface OwnedClaim {
  accountId: string;
  key: string;
  // The claim's end as stored: it names this claim's row (releaseIdempotencyKey).
  lockedUntil: Date;
}

interface Pending {
  claim: OwnedClaim;
  // The attempt under way, if one is.
  attempt?: Promise<boolean>;
  timer?: unknown;
  log: Logger;
}

// The waits between attempts while the database does not answer: soon after it is back, the key
// is free.
const RETRY_WAITS_MS = [250, 500, 1_000];

export interface ClaimReleasesOptions {
  logThrottle: LogThrottle;
  timers?: Timers;
}

// The claims this process gives back after an answer that is not kept (a 5xx, 401, 429). A
// request that ended in 503 because the database did not answer usually cannot give its claim
// back at that moment either: the release is then tried again in the background, until the
// database answers or the claim has expired anyway (it lasts no longer than its request can:
// claimLifetimeMs), and never holds the response. Each attempt is the guarded DELETE of
// releaseIdempotencyKey: it frees only this claim's row, and never a key whose operation
// committed its result, so a late release cannot let a request run twice.
// A retry of the same key that reaches this process first (settle) tries the release itself:
// the database has just answered its claim.
export class ClaimReleases {
  private readonly pending = new Map<string, Pending>();
  private readonly timers: Timers;

  constructor(
    private readonly db: Database,
    private readonly options: ClaimReleasesOptions,
  ) {
    this.timers = options.timers ?? systemTimers;
  }

  // Starts the release; resolves once its first attempt has ended (true: the key is free, or
  // kept for its committed result). The caller need not wait for it.
  release(claim: OwnedClaim, log: Logger): Promise<boolean> {
    const id = idOf(claim);
    const previous = this.pending.get(id);
    if (previous?.timer !== undefined) this.timers.clearTimeout(previous.timer);
    const entry: Pending = { claim, log };
    this.pending.set(id, entry);
    return this.attempt(id, entry, 0);
  }

  // Before a claim of this key is answered 409 in progress: a release this process still owes
  // on it is tried now. Resolves true when one was pending and is done.
  async settle(accountId: string, key: string): Promise<boolean> {
    const id = idOf({ accountId, key });
    const entry = this.pending.get(id);
    if (!entry) return false;
    // One attempt at a time: one that is under way is waited for, not doubled.
    if (entry.attempt && (await entry.attempt)) return true;
    if (this.pending.get(id) !== entry) return !this.pending.has(id);
    if (entry.timer !== undefined) this.timers.clearTimeout(entry.timer);
    entry.timer = undefined;
    return this.attempt(id, entry, RETRY_WAITS_MS.length - 1);
  }

  // The releases still owed (for tests and shutdown's log).
  get size(): number {
    return this.pending.size;
  }

  private attempt(id: string, entry: Pending, tries: number): Promise<boolean> {
    const attempt = withoutWriteDeadline(() => releaseIdempotencyKey(this.db, entry.claim)).then(
      () => {
        if (this.pending.get(id) === entry) this.pending.delete(id);
        return true;
      },
      (error: unknown) => {
        this.options.logThrottle.log(
          entry.log,
          'error',
          failureCause(error, 'idempotency'),
          { err: error, idempotencyKey: entry.claim.key },
          'idempotency key not settled: its release is tried again',
        );
        if (this.pending.get(id) === entry) this.retryLater(id, entry, tries);
        return false;
      },
    );
    entry.attempt = attempt;
    return attempt;
  }

  private retryLater(id: string, entry: Pending, tries: number): void {
    const wait = RETRY_WAITS_MS[Math.min(tries, RETRY_WAITS_MS.length - 1)]!;
    // Past its end the claim is anyone's to take: a release then would be no use.
    if (this.timers.now() + wait >= entry.claim.lockedUntil.getTime()) {
      this.pending.delete(id);
      return;
    }
    entry.timer = this.timers.setTimeout(() => {
      entry.timer = undefined;
      if (this.pending.get(id) === entry) void this.attempt(id, entry, tries + 1);
    }, wait);
    (entry.timer as { unref?: () => void }).unref?.();
  }
}

function idOf(claim: { accountId: string; key: string }): string {
  return `${claim.accountId}\u0000${claim.key}`;
}
