import type { Request } from 'express';
import type { ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import './express-types';
import { RateLimitUnavailableError } from './rate-limit/sliding-window-store';

// Why a request was answered 503: a label on the 503 counter (GET /metrics) and a field of its
// access-log line. The messages are the public ones (docs/errors.md), so they are stable.
export type UnavailableCause = 'database' | 'database_busy' | 'redis' | 'shutdown' | 'other';

const CAUSE_BY_MESSAGE: Record<string, UnavailableCause> = {
  'Database unavailable; retry shortly': 'database',
  'Database busy; retry shortly': 'database_busy',
};

export function unavailableCause(error: ServiceUnavailableError): UnavailableCause {
  if (error instanceof RateLimitUnavailableError) return 'redis';
  return CAUSE_BY_MESSAGE[error.message] ?? 'other';
}

// Every 503 path calls this: the cause goes on the request, and the failure to the log at most
// once per 10 s per cause (an outage fails every request the same way).
export function reportUnavailable(req: Request, error: ServiceUnavailableError, throttle: LogThrottle): void {
  const cause = unavailableCause(error);
  req.unavailableCause = cause;
  throttle.log(req.log, 'error', cause, { err: error.cause ?? error }, `${error.message.split(';')[0]}: answering 503`);
}
