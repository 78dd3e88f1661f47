import type { Database } from '../../db/database';
import type { Logger } from '../../logging/logger';
import { purgeEventsBefore } from './purge-events';

export interface EventRetentionSettings {
  retentionDays: number;
  // How often the purge runs; the first run comes one interval after start.
  intervalMs: number;
  batchSize: number;
  // Per run: a backlog larger than batchSize * maxBatches is left for the next runs.
  maxBatches: number;
}

export const DEFAULT_EVENT_RETENTION: Omit<EventRetentionSettings, 'retentionDays'> = {
  intervalMs: 60 * 60 * 1000,
  batchSize: 1_000,
  maxBatches: 100,
};

const DAY_MS = 24 * 60 * 60 * 1000;

// Purges events older than the retention period, periodically, inside the service. One run at
// a time; stop() ends the schedule and waits for the batch under way (each statement is
// bounded by the database's statement deadline), never for the rest of the run.
export class EventRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly settings: EventRetentionSettings,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  // One purge now (also what the schedule runs). Failures are logged, not thrown: the next
  // run tries again.
  runOnce(): Promise<void> {
    this.running ??= this.purge().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.runOnce().then(() => this.schedule()), this.settings.intervalMs);
    // The schedule alone never keeps the process alive.
    this.timer.unref();
  }

  private async purge(): Promise<void> {
    const before = new Date(this.now().getTime() - this.settings.retentionDays * DAY_MS);
    try {
      const deleted = await purgeEventsBefore(this.db, { ...this.settings, before, shouldStop: () => this.stopped });
      if (deleted > 0) this.logger.info({ deleted, before: before.toISOString() }, 'expired events purged');
    } catch (error) {
      this.logger.warn({ err: error }, 'purging expired events failed; the next run tries again');
    }
  }
}
