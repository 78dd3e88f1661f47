import { EventEmitter } from 'node:events';

// An import this process queued wakes this process's import task at once; another process's
// task finds it on its next look (src/services/maintenance/contact-import-task.ts).
const queued = new EventEmitter();
queued.setMaxListeners(0);

export function notifyImportQueued(): void {
  queued.emit('queued');
}

export function onImportQueued(listener: () => void): () => void {
  queued.on('queued', listener);
  return () => queued.off('queued', listener);
}
