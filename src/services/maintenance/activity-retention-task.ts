import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { retentionStart } from '../activities/occurred-at';
import { pruneActivities } from '../activities/prune-activities';
import { PeriodicTask } from '../background/periodic-task';
import type { Timers } from '../background/timers';

export interface ActivityRetentionSettings {
  retentionDays: number;
  // Between passes once nothing old is left.
  intervalMs: number;
  rowsPerChunk: number;
  // Per pass; a larger backlog goes on in the next pass, at once.
  maxChunks: number;
}

export const DEFAULT_ACTIVITY_RETENTION: Omit<ActivityRetentionSettings, 'retentionDays'> = {
  intervalMs: 60 * 60 * 1000,
  rowsPerChunk: 5_000,
  maxChunks: 20,
};

// Activities that occurred more than retentionDays ago, deleted in bounded chunks
// (src/services/activities/prune-activities.ts) on the task's schedule.
export function activityRetentionTask(
  db: Database,
  settings: ActivityRetentionSettings,
  options: { logger: Logger; logThrottle?: LogThrottle; timers?: Timers },
): PeriodicTask {
  return new PeriodicTask({
    name: 'activity retention',
    ...options,
    intervalMs: settings.intervalMs,
    async pass(now, shouldStop) {
      const before = retentionStart(now, settings.retentionDays);
      const pruned = await pruneActivities(db, { ...settings, before, shouldStop });
      if (pruned.deleted > 0) options.logger.info({ deleted: pruned.deleted, before: before.toISOString() }, 'activities pruned');
      return pruned.more;
    },
  });
}
