import pino, { type DestinationStream } from 'pino';
import type { LogLevel } from './config';
import { errorForLog } from './error-for-log';

export type Logger = pino.Logger;

// Whatever a call site passes, these never reach a line: the key header, and fields named
// like a key or its hash. Request bodies and headers are not logged at all (src/http/access-log.ts).
const SECRET_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'key',
  'apiKey',
  'keyHash',
  'key_hash',
  '*.key',
  '*.apiKey',
  '*.keyHash',
  '*.key_hash',
];

// One JSON object per line on stderr, so stdout stays clean for the CLI's JSON output and the
// welcome text. Synchronous: a line written just before process.exit is not lost.
export function createLogger(level: LogLevel, destination: DestinationStream = pino.destination({ dest: 2, sync: true })): Logger {
  return pino(
    {
      level,
      redact: { paths: SECRET_PATHS, censor: '[redacted]' },
      serializers: { err: errorForLog },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
