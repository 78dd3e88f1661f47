import { EventEmitter } from 'node:events';

// "Work just became due": what a write that makes a run due now (an enrollment, a resume, a
// sequence set active again) tells the engines of its own process, so that the run starts at
// once rather than at the engine's next look. Other processes' engines find it at their next
// look (src/services/engine/engine.ts): the database is what holds due work; this is only a
// nudge, and losing it costs a second, never a run.
const dueWork = new EventEmitter();
dueWork.setMaxListeners(0);

export function notifyDueWork(): void {
  dueWork.emit('due');
}

export function onDueWork(listener: () => void): () => void {
  dueWork.on('due', listener);
  return () => dueWork.off('due', listener);
}
