import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { LoopBackoff } from './loop-backoff';
import { systemTimers, type TimerHandle, type Timers } from './timers';

export interface PeriodicTaskOptions {
  // Names the task in its log lines.
  name: string;
  logger: Logger;
  // The clock and timers: tests move time by hand and never wait for real.
  timers?: Timers;
  // The process's log throttle: an outage is one line per cause per 10 s, whoever met it.
  logThrottle?: LogThrottle;
  backoff?: { initialMs?: number; maxMs?: number };
  // Between passes that found nothing more to do.
  intervalMs: number;
  // How long a wake() waits for more of the same before its pass (0: at once). A task woken by
  // every commit of a busy writer then makes one pass of many commits' work, not one each.
  wakeLingerMs?: number;
  // One bounded pass at `now`. Answers whether work is left: then the next pass comes at once.
  // shouldStop() turns true when the task is stopping: a pass checks it between its chunks.
  pass: (now: Date, shouldStop: () => boolean) => Promise<boolean>;
}

// A maintenance task the service and the worker run beside their loops: one pass at a time, on
// its interval, at once again while work is left, woken early by wake() (work this process made),
// backing off while the database fails. Holds no work itself: what is to be done is in the
// database, so a restart, or another process, carries it on.
export class PeriodicTask {
  private readonly timers: Timers;
  private readonly backoff: LoopBackoff;
  private timer: TimerHandle | undefined;
  private running: Promise<boolean | undefined> | undefined;
  // Not started, or stopped: nothing is scheduled (runOnce still runs a pass when called).
  private scheduled = false;
  // stop() was called: a pass under way ends after its chunk.
  private stopping = false;

  constructor(private readonly options: PeriodicTaskOptions) {
    this.timers = options.timers ?? systemTimers;
    const throttle = options.logThrottle ?? new LogThrottle(10_000, this.timers.now);
    this.backoff = new LoopBackoff({ name: options.name, logger: options.logger, throttle, ...options.backoff });
  }

  start(firstInMs = this.options.intervalMs): void {
    this.scheduled = true;
    this.stopping = false;
    this.schedule(firstInMs);
  }

  // Work is waiting now: the next pass comes at once; after the one under way, if any (it may
  // have looked before the work was there). While the database fails, the backoff decides.
  wake(): void {
    if (!this.scheduled || this.backoff.failing) return;
    if (this.running) {
      this.wokenWhileRunning = true;
      return;
    }
    const linger = this.options.wakeLingerMs ?? 0;
    // A pass already due within the linger takes this wake's work too.
    if (this.timer !== undefined && this.timerDueAt <= this.timers.now() + linger) return;
    this.schedule(linger);
  }

  // One pass, now. Failures are logged and answered as "nothing more for now": the schedule
  // tries again after the backoff.
  async runOnce(): Promise<boolean> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return (await this.running) ?? false;
  }

  // Stops the schedule; waits for the pass under way to end its chunk (each statement is bounded
  // by the database's statement deadline), never for the rest of its work.
  async stop(): Promise<void> {
    this.scheduled = false;
    this.stopping = true;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(ms: number): void {
    if (!this.scheduled) return;
    this.timers.clearTimeout(this.timer);
    this.timerDueAt = this.timers.now() + ms;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.wokenWhileRunning = false;
      void this.runOnce().then((more) => {
        const retryInMs = this.backoff.failing ? this.lastRetryInMs : undefined;
        this.schedule(retryInMs ?? (more ? 0 : this.wokenWhileRunning ? (this.options.wakeLingerMs ?? 0) : this.options.intervalMs));
      });
    }, ms);
    // The schedule alone never keeps a process alive.
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  private timerDueAt = 0;
  private lastRetryInMs: number | undefined;
  private wokenWhileRunning = false;

  private async pass(): Promise<boolean | undefined> {
    try {
      const more = await this.options.pass(new Date(this.timers.now()), () => this.stopping);
      this.backoff.succeeded();
      this.lastRetryInMs = undefined;
      return more;
    } catch (error) {
      this.lastRetryInMs = this.backoff.failed(error);
      return undefined;
    }
  }
}
