import pino, { type DestinationStream } from 'pino';
import type { LogLevel } from '../config';
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
  // The senders' secrets (docs/channels.md): an SMTP URL carries its password.
  'smtpUrl',
  'privateKey',
  'accessToken',
  '*.smtpUrl',
  '*.privateKey',
  '*.accessToken',
  '*.*.privateKey',
];

// One JSON object per line on stderr, so stdout stays clean for the CLI's JSON output and the
// welcome text. Asynchronous (sonic-boom): a line costs no blocking write on the request path.
// Lines are written 4 KiB at a time, or at the latest 200 ms after they were logged: one write
// per access line was a twentieth of a request's CPU under load (issue 8). Lines still buffered
// at exit are written by flushLogs on shutdown, and by pino's own exit hook (a synchronous
// flush on process.exit) on every other way out.
export const LOG_FLUSH_MS = 200;

export function createLogger(
  level: LogLevel,
  destination: DestinationStream = pino.destination({ dest: 2, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS }),
): Logger {
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

// Waits until the lines written so far have reached the destination, at most timeoutMs (a
// stderr nobody reads must not hold a shutdown).
export function flushLogs(logger: Logger, timeoutMs = 1_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      logger.flush(done);
    } catch {
      done();
    }
  });
}
