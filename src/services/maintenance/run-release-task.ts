import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { PeriodicTask } from '../background/periodic-task';
import type { Timers } from '../background/timers';
import { notifyDueWork } from '../runs/due-work';
import { onReleaseRequested } from '../sequences/park-runs';
import { releasePendingRuns } from '../sequences/release-runs';

export interface RunReleaseSettings {
  // The idle look for releases another process recorded.
  intervalMs: number;
  // Runs looked at per chunk (one transaction).
  chunkSize: number;
  // Per pass; more goes on at once in the next pass.
  maxChunks: number;
}

export const DEFAULT_RUN_RELEASE: RunReleaseSettings = { intervalMs: 1_000, chunkSize: 2_000, maxChunks: 25 };

// Sequences set active again, and new sending windows: their runs made due a chunk at a time
// (src/services/sequences/release-runs.ts). Woken at once by a change this process commits;
// other processes' changes are found within intervalMs. Each chunk that made runs due wakes
// this process's engine.
export function runReleaseTask(
  db: Database,
  settings: RunReleaseSettings,
  options: { logger: Logger; logThrottle?: LogThrottle; timers?: Timers },
): { task: PeriodicTask; start(): void; stop(): Promise<void> } {
  const task = new PeriodicTask({
    name: 'run release',
    ...options,
    intervalMs: settings.intervalMs,
    async pass(_now, shouldStop) {
      const { more } = await releasePendingRuns(db, { ...settings, shouldStop, onReleased: () => notifyDueWork() });
      return more;
    },
  });
  let unsubscribe: (() => void) | undefined;
  return {
    task,
    start() {
      unsubscribe = onReleaseRequested(() => task.wake());
      task.start();
    },
    async stop() {
      unsubscribe?.();
      await task.stop();
    },
  };
}
