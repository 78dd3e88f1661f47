import type { LogLevel } from '../../src/config';
import { createLogger, type Logger } from '../../src/logging/logger';

export interface LogRecord {
  level: string;
  msg: string;
  [field: string]: unknown;
}

// The service's logger (src/logging/logger.ts), writing its JSON lines to memory instead of stderr.
export function bufferLogger(level: LogLevel = 'debug') {
  const lines: string[] = [];
  const logger: Logger = createLogger(level, { write: (line: string) => void lines.push(line) });
  return {
    logger,
    text: () => lines.join(''),
    records: (): LogRecord[] => lines.map((line) => JSON.parse(line) as LogRecord),
  };
}
