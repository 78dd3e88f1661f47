import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { PeriodicTask } from '../background/periodic-task';
import type { Timers } from '../background/timers';
import { pruneRunHistory } from '../sequences/prune-run-history';

export interface RunHistorySettings {
  historyDays: number;
  // Between passes once nothing old is left.
  intervalMs: number;
  runsPerChunk: number;
  rowsPerChunk: number;
  // Per pass; a larger backlog goes on in the next pass, at once.
  maxChunks: number;
}

export const DEFAULT_RUN_HISTORY: Omit<RunHistorySettings, 'historyDays'> = {
  intervalMs: 60 * 60 * 1000,
  runsPerChunk: 500,
  rowsPerChunk: 5_000,
  maxChunks: 20,
};

const DAY_MS = 24 * 60 * 60 * 1000;

// The step executions and finished sends of runs that ended more than historyDays ago, deleted in bounded chunks
// (src/services/sequences/prune-run-history.ts) on the task's schedule.
export function runHistoryTask(
  db: Database,
  settings: RunHistorySettings,
  options: { logger: Logger; logThrottle?: LogThrottle; timers?: Timers },
): PeriodicTask {
  return new PeriodicTask({
    name: 'run history prune',
    ...options,
    intervalMs: settings.intervalMs,
    async pass(now, shouldStop) {
      const before = new Date(now.getTime() - settings.historyDays * DAY_MS);
      const pruned = await pruneRunHistory(db, { ...settings, before, shouldStop });
      if (pruned.executions > 0 || pruned.sends > 0) {
        options.logger.info({ runs: pruned.runs, executions: pruned.executions, sends: pruned.sends, before: before.toISOString() }, 'run history pruned');
      }
      return pruned.more;
    },
  });
}
