import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { failureCause } from './failure-cause';

export interface LoopBackoffOptions {
  // Names the loop in its log lines ('webhook dispatcher'); with spaces as underscores, the
  // cause of a failure that is not the database's.
  name: string;
  logger: Logger;
  // The process's throttle, the one requests log through.
  throttle: LogThrottle;
  // The wait after the first failed pass, doubled after each further one, up to maxMs.
  initialMs?: number;
  maxMs?: number;
}

export const DEFAULT_LOOP_BACKOFF = { initialMs: 500, maxMs: 15_000 };

// A background loop's passes while a dependency is down: each failed pass makes the loop wait
// longer before the next (500 ms, 1 s, 2 s, ... 15 s), instead of failing 4 times a second,
// and is logged at most once per cause per throttle window (a stack on every pass was 20 MB
// an hour). The first pass that succeeds puts the loop back on its own schedule, and says so.
// 15 s: a loop is back at work at most that long after its database.
export class LoopBackoff {
  private failures = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly otherCause: string;

  constructor(private readonly options: LoopBackoffOptions) {
    this.initialMs = options.initialMs ?? DEFAULT_LOOP_BACKOFF.initialMs;
    this.maxMs = Math.max(options.maxMs ?? DEFAULT_LOOP_BACKOFF.maxMs, this.initialMs);
    this.otherCause = options.name.replace(/\W+/g, '_');
  }

  // Whether the last pass failed: work that would start a pass early waits for the backoff.
  get failing(): boolean {
    return this.failures > 0;
  }

  // A pass failed: returns how long to wait before the next one.
  failed(error: unknown): number {
    this.failures += 1;
    const delayMs = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures - 1, 30));
    const { name, logger, throttle } = this.options;
    throttle.log(
      logger,
      'error',
      failureCause(error, this.otherCause),
      { err: error, loop: name, failedPasses: this.failures, retryInMs: delayMs },
      `${name} pass failed`,
    );
    return delayMs;
  }

  // A pass succeeded.
  succeeded(): void {
    if (this.failures === 0) return;
    this.options.logger.info({ loop: this.options.name, failedPasses: this.failures }, `${this.options.name} resumed`);
    this.failures = 0;
  }
}
