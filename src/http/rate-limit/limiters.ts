import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Options } from 'express-rate-limit';
import '../express-types';
import { sendError } from '../send-error';
import { SlidingWindowStore, type SlidingLog } from './sliding-window-store';

const MINUTE = 60_000;

export interface RateLimitSettings {
  perKeyPerMinute: number;
  failedAuthPerIpPerMinute: number;
  log: SlidingLog;
}

// Which limiter refused goes on the request, for the access log and the 429 counter.
const tooMany = (req: Request, res: Response, _next: NextFunction, options: Options) => {
  req.rateLimitedBy = String(options.identifier);
  sendError(req, res, { status: 429, code: 'rate_limited', message: 'Rate limit exceeded' });
};

// Two limits, both after the key is resolved:
// - per API key (its id, not the raw header, so random bogus keys get no fresh budgets),
//   counted across REST and tRPC, with RateLimit / RateLimit-Policy headers (IETF draft-8);
// - per client IP on requests that fail authentication, so keys cannot be guessed at speed.
export function rateLimiters(settings: RateLimitSettings): RequestHandler[] {
  const common = {
    windowMs: MINUTE,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: tooMany,
  } as const;
  const failedAuthPerIp = rateLimit({
    ...common,
    identifier: 'failed-auth',
    limit: settings.failedAuthPerIpPerMinute,
    store: new SlidingWindowStore(settings.log, 'rl:ip:'),
    skip: (req) => req.auth?.ok === true,
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
  });
  const perKey = rateLimit({
    ...common,
    identifier: 'api-key',
    limit: settings.perKeyPerMinute,
    store: new SlidingWindowStore(settings.log, 'rl:key:'),
    skip: (req) => req.auth?.ok !== true,
    keyGenerator: (req) => (req.auth?.ok ? req.auth.key.keyId : 'unauthenticated'),
  });
  return [failedAuthPerIp, perKey];
}
