import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Options } from 'express-rate-limit';
import '../express-types';
import { sendError } from '../send-error';
import { draft8Headers } from './draft8-headers';
import { SlidingWindowStore, type SlidingLog } from './sliding-window-store';

const MINUTE = 60_000;

export interface RateLimitSettings {
  perKeyPerMinute: number;
  failedAuthPerIpPerMinute: number;
  log: SlidingLog;
}

const authenticated = (req: Request) => req.auth?.ok === true;

// A limiter entered only for the requests it counts. (Its `skip` option would do the same
// later: a skipped request still pays for the limiter's async steps and for two reads of req.ip,
// which parses X-Forwarded-For, in its debug lines.)
const only =
  (counted: (req: Request) => boolean, limiter: RequestHandler): RequestHandler =>
  (req, res, next) =>
    counted(req) ? limiter(req, res, next) : next();

// Which limiter refused goes on the request, for the access log and the 429 counter.
const tooMany =
  (refused: (req: Request, res: Response) => void) =>
  (req: Request, res: Response, _next: NextFunction, options: Options) => {
    refused(req, res);
    req.rateLimitedBy = String(options.identifier);
    sendError(req, res, { status: 429, code: 'rate_limited', message: 'Rate limit exceeded' });
  };

// Two limits, both after the key is resolved:
// - per API key (its id, not the raw header, so random bogus keys get no fresh budgets),
//   counted across REST and tRPC, with RateLimit / RateLimit-Policy headers (IETF draft-8);
// - per client IP on requests that fail authentication, so keys cannot be guessed at speed.
export function rateLimiters(settings: RateLimitSettings): RequestHandler[] {
  // The draft-8 headers are written by draft8-headers.ts (no per-response key hash), so the
  // library's own are off; each limiter keeps its info under its own request property.
  const common = {
    windowMs: MINUTE,
    standardHeaders: false,
    legacyHeaders: false,
  } as const;
  const failedAuthHeaders = draft8Headers({ property: 'rateLimitFailedAuth', name: 'failed-auth', windowMs: MINUTE });
  const perKeyHeaders = draft8Headers({ property: 'rateLimit', name: 'api-key', windowMs: MINUTE });
  const failedAuthPerIp = rateLimit({
    ...common,
    identifier: 'failed-auth',
    requestPropertyName: 'rateLimitFailedAuth',
    handler: tooMany(failedAuthHeaders.refused),
    limit: settings.failedAuthPerIpPerMinute,
    store: new SlidingWindowStore(settings.log, 'rl:ip:'),
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
  });
  const perKey = rateLimit({
    ...common,
    identifier: 'api-key',
    requestPropertyName: 'rateLimit',
    handler: tooMany(perKeyHeaders.refused),
    limit: settings.perKeyPerMinute,
    store: new SlidingWindowStore(settings.log, 'rl:key:'),
    keyGenerator: (req) => (req.auth?.ok ? req.auth.key.keyId : 'unauthenticated'),
  });
  return [
    only((req) => !authenticated(req), failedAuthPerIp),
    failedAuthHeaders.middleware,
    only(authenticated, perKey),
    perKeyHeaders.middleware,
  ];
}
