import type { LogLevel } from './config';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

// One JSON object per line on stderr, so stdout stays clean for the CLI's JSON output.
export function createLogger(level: LogLevel, base: LogFields = {}): Logger {
  const threshold = ORDER[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, message: string, fields?: LogFields) => {
    if (ORDER[lvl] < threshold) return;
    const line = { time: new Date().toISOString(), level: lvl, msg: message, ...base, ...fields };
    process.stderr.write(`${JSON.stringify(line, errorReplacer)}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}

function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
