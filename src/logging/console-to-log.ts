import { format } from 'node:util';
import type { Logger } from './logger';

// Every line the process writes to stderr is one JSON object, but some libraries write to the
// console themselves: Sequelize, when a ROLLBACK or COMMIT fails on a connection the database
// has dropped ("Rolling back transaction ... failed ... We are killing its connection"; a
// console.warn in its transaction.js, outside its `logging` option and its utils/logger), and
// mysql2 on protocol faults ("got packets out of order", console.error). Node prints its
// own warnings (deprecations, listener leaks) as text too. Called once at start-up by the
// server and the worker, this sends all of them to the logger instead: one line each, at the
// console method's level, with `source` saying where it came from. Returns a function that
// puts the console back (tests).
const LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error' } as const;

export function routeConsoleToLog(logger: Logger): () => void {
  const originals = new Map<keyof typeof LEVELS, (...args: unknown[]) => void>();
  for (const [method, level] of Object.entries(LEVELS) as Array<[keyof typeof LEVELS, (typeof LEVELS)[keyof typeof LEVELS]]>) {
    originals.set(method, console[method]);
    console[method] = (...args: unknown[]) => logger[level]({ source: `console.${method}` }, format(...args));
  }
  const nodeListeners = process.listeners('warning');
  process.removeAllListeners('warning');
  const onWarning = (warning: Error) => logger.warn({ source: 'process.warning', err: warning }, warning.message);
  process.on('warning', onWarning);
  return () => {
    for (const [method, original] of originals) console[method] = original;
    process.off('warning', onWarning);
    for (const listener of nodeListeners) process.on('warning', listener);
  };
}
