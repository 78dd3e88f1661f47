import type { Config } from '../../config';
import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { DEFAULT_PROJECTION, projectionTask, type ProjectionMetrics } from '../events/projection/projection-task';
import { activityRetentionTask, DEFAULT_ACTIVITY_RETENTION } from './activity-retention-task';
import { DEFAULT_RUN_HISTORY, runHistoryTask } from './run-history-task';
import { DEFAULT_RUN_RELEASE, runReleaseTask } from './run-release-task';
import { contactImportTask, DEFAULT_CONTACT_IMPORTS } from './contact-import-task';
import { importsDir } from '../imports/imports-dir';

export interface Maintenance {
  stop(): Promise<void>;
}

// The maintenance tasks (the run log's projection and the contact imports among them) as the service and `npm run worker` run them, each process alike: the
// work is found in the database and taken a chunk per transaction, so any number of processes
// may run them side by side (they take turns on the same rows).
export function startMaintenance(
  db: Database,
  config: Pick<Config, 'runHistoryDays' | 'activityRetentionDays'> & Partial<Pick<Config, 'dataDir'>>,
  logger: Logger,
  logThrottle?: LogThrottle,
  metrics?: { projection?: ProjectionMetrics },
): Maintenance {
  const tasks = [
    projectionTask(db, DEFAULT_PROJECTION, { logger, logThrottle, metrics: metrics?.projection }),
    runReleaseTask(db, DEFAULT_RUN_RELEASE, { logger, logThrottle }),
    runHistoryTask(db, { ...DEFAULT_RUN_HISTORY, historyDays: config.runHistoryDays }, { logger, logThrottle }),
    activityRetentionTask(db, { ...DEFAULT_ACTIVITY_RETENTION, retentionDays: config.activityRetentionDays }, { logger, logThrottle }),
    contactImportTask(db, { ...DEFAULT_CONTACT_IMPORTS, dir: importsDir(config.dataDir) }, { logger, logThrottle }),
  ];
  for (const task of tasks) task.start();
  return {
    async stop() {
      await Promise.all(tasks.map((task) => task.stop()));
    },
  };
}
