import type { Logger } from './logger';

// During an outage every request fails for the same reason; one line per request would bury
// everything else (an 8 s Redis outage once wrote 3,602). Per cause ('database', 'redis', ...),
// at most one line per window is written; the others are counted, and the next line written
// for that cause says how many were left out (`suppressed`).
export class LogThrottle {
  private readonly causes = new Map<string, { loggedAt: number; suppressed: number }>();

  constructor(
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  // Writes the line unless one for this cause was written less than a window ago. Returns
  // whether it was written.
  log(logger: Logger, level: 'warn' | 'error', cause: string, fields: Record<string, unknown>, message: string): boolean {
    const now = this.now();
    const state = this.causes.get(cause);
    if (state && now - state.loggedAt < this.windowMs) {
      state.suppressed += 1;
      return false;
    }
    this.causes.set(cause, { loggedAt: now, suppressed: 0 });
    const suppressed = state?.suppressed ?? 0;
    logger[level]({ cause, ...fields, ...(suppressed > 0 && { suppressed }) }, message);
    return true;
  }
}
