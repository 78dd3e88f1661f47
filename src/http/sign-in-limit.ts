import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { normalizeEmail } from '../services/dashboard/users';
import { sendError } from './send-error';
import { SlidingWindowStore, type SlidingLog } from './rate-limit/sliding-window-store';
import './express-types';

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_FAILURES = 10;
export const SIGN_IN_LIMITED = 'Too many failed sign-ins; try again later';

// Failed sign-ins, counted per client IP and per email (10 per 15 min each): one guesses many
// passwords from one address, the other one password from many addresses. A successful
// sign-in takes its own attempt back out of the count. The email is kept as a hash: the
// counters may live in a shared Redis.
export function signInLimiters(log: SlidingLog): RequestHandler[] {
  const common = {
    windowMs: SIGN_IN_WINDOW_MS,
    limit: SIGN_IN_FAILURES,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    skipSuccessfulRequests: true,
    handler: (req: Request, res: Response, _next: NextFunction) => {
      req.rateLimitedBy = 'sign-in';
      sendError(req, res, { status: 429, code: 'rate_limited', message: SIGN_IN_LIMITED });
    },
  } as const;
  const perIp = rateLimit({
    ...common,
    identifier: 'sign-in-ip',
    store: new SlidingWindowStore(log, 'rl:signin:ip:'),
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
  });
  const perEmail = rateLimit({
    ...common,
    identifier: 'sign-in-email',
    store: new SlidingWindowStore(log, 'rl:signin:email:'),
    keyGenerator: (req) => {
      const email = (req.body as { email?: unknown } | undefined)?.email;
      const normalized = typeof email === 'string' ? normalizeEmail(email) : '';
      return createHash('sha256').update(normalized).digest('hex');
    },
  });
  return [perIp, perEmail];
}
