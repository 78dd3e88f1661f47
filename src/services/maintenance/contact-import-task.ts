import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/database';
import { databaseNow } from '../../db/sql/clock';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { PeriodicTask } from '../background/periodic-task';
import { systemTimers, type Timers } from '../background/timers';
import { onImportQueued } from '../imports/import-queue';
import { DEFAULT_IMPORT_RUN, runImports, type ImportRunSettings } from '../imports/run-import';

export interface ContactImportSettings {
  // DATA_DIR/imports: the service and the worker must share it.
  dir: string;
  // The idle look for imports another process queued.
  intervalMs: number;
  batchSize?: number;
  leaseMs?: number;
  maxBatches?: number;
}

// Contact imports (src/services/imports/run-import.ts), moved in the background by the service
// and by `npm run worker` alike: an import is held by one process at a time under a lease, and a
// process that dies leaves it to another once the lease ends. Woken at once by an import this
// process queued; another process's are found within intervalMs.
export function contactImportTask(
  db: Database,
  settings: ContactImportSettings,
  options: { logger: Logger; logThrottle?: LogThrottle; timers?: Timers },
): { task: PeriodicTask; settings: ImportRunSettings; start(): void; stop(): Promise<void> } {
  const timers = options.timers ?? systemTimers;
  const read = () => databaseNow(db);
  const run: ImportRunSettings = {
    ...DEFAULT_IMPORT_RUN,
    ...(settings.batchSize && { batchSize: settings.batchSize }),
    ...(settings.leaseMs && { leaseMs: settings.leaseMs }),
    ...(settings.maxBatches && { maxBatches: settings.maxBatches }),
    dir: settings.dir,
    owner: `${os.hostname().slice(0, 32)}:${process.pid}:${randomBytes(4).toString('hex')}`,
    now: () => (timers.databaseNow ? timers.databaseNow(read) : read()),
  };
  const task = new PeriodicTask({
    name: 'contact imports',
    ...options,
    intervalMs: settings.intervalMs,
    pass: (_now, shouldStop) => runImports(db, run, shouldStop),
  });
  let unsubscribe: (() => void) | undefined;
  return {
    task,
    settings: run,
    start() {
      unsubscribe = onImportQueued(() => task.wake());
      task.start();
    },
    async stop() {
      unsubscribe?.();
      await task.stop();
    },
  };
}

export const DEFAULT_CONTACT_IMPORTS = { intervalMs: 1_000 };
