import type { Database } from '../../../db/database';
import type { LogThrottle } from '../../../logging/log-throttle';
import type { Logger } from '../../../logging/logger';
import { PeriodicTask } from '../../background/periodic-task';
import type { Timers } from '../../background/timers';
import { onLogged } from './logged';
import { projectRunLog } from './projector';

export interface ProjectionSettings {
  // The idle look for rows another process appended (this process's own wake it at once).
  intervalMs: number;
  // Transactions (of PROJECTION_BATCH rows) per pass; more goes on at once in the next pass.
  maxBatches: number;
  // A commit's wake waits this long for the commits beside it: under a busy engine one projector
  // transaction applies many records' rows instead of one each (its lag grows by at most this).
  wakeLingerMs: number;
}

export const DEFAULT_PROJECTION: ProjectionSettings = { intervalMs: 200, maxBatches: 10, wakeLingerMs: 25 };

export interface ProjectionMetrics {
  // From a row's commit (its writer's time) to the projection's, per row.
  lagSeconds: { observe(value: number): void };
}

// The projection as the service and every worker run it (start-maintenance.ts): woken by this
// process's commits of run log rows, and every intervalMs for other processes' rows. Any number
// of processes may run it: they take turns on the projection's lock (projector.ts).
export function projectionTask(
  db: Database,
  settings: ProjectionSettings,
  options: { logger: Logger; logThrottle?: LogThrottle; timers?: Timers; metrics?: ProjectionMetrics },
): { task: PeriodicTask; start(): void; stop(): Promise<void> } {
  const task = new PeriodicTask({
    name: 'run log projection',
    ...options,
    intervalMs: settings.intervalMs,
    wakeLingerMs: settings.wakeLingerMs,
    async pass(_now, shouldStop) {
      for (let batch = 0; batch < settings.maxBatches && !shouldStop(); batch += 1) {
        const { rows, more, writtenAt } = await projectRunLog(db);
        // (Wall-clock time on both sides: a row's time is its writer's Date.now().)
        const committed = Date.now();
        for (const at of writtenAt) options.metrics?.lagSeconds.observe(Math.max(0, committed - at) / 1000);
        if (rows === 0 || !more) return false;
      }
      return true;
    },
  });
  let unsubscribe: (() => void) | undefined;
  return {
    task,
    start() {
      unsubscribe = onLogged(() => task.wake());
      task.start();
    },
    async stop() {
      unsubscribe?.();
      await task.stop();
    },
  };
}
