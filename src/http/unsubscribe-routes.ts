import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Database } from '../db/database';
import { AppError, ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../services/channels/channel-settings';
import { findUnsubscribeTarget, readUnsubscribeToken, unsubscribeByToken } from '../services/unsubscribe/unsubscribe-links';
import './express-types';
import { isOneClickBody } from './one-click-body';
import { SlidingWindowStore, type SlidingLog } from './rate-limit/sliding-window-store';
import { reportUnavailable } from './report-unavailable';

// /u/{token}: the one-click unsubscribe link of every email (docs/channels.md "One-click
// unsubscribe"). Outside /api/v1 and not in the OpenAPI document: it is for recipients and their
// mail providers, takes no key and no cookie, and answers small HTML pages.
// - GET shows a page with a button and changes nothing: link scanners and previews follow GETs.
// - POST with `List-Unsubscribe=One-Click` (the RFC 8058 body; the page's button sends the same)
//   unsubscribes. A repeat answers the same page and changes nothing.
// - A token that is not ours, altered, or naming a contact that is gone: 404, the same page.
// Rate-limited per client IP, generously, and only for tokens that do not verify: a token we
// signed is always served (its POST is idempotent, its GET changes nothing), so a flood of bad
// tokens from one address (Gmail and Yahoo post for their users from a few) never refuses a
// genuine one-click from that address. Checking the signature costs no database read.

const BODY_LIMIT = '16kb';

export interface UnsubscribeRoutesOptions {
  db: Database;
  channels?: ChannelSettings;
  log: SlidingLog;
  limitPerMinute: number;
  logThrottle: LogThrottle;
}

const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  // The token is in the URL: never sent on to another site.
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

function page(res: Response, status: number, title: string, body: string): void {
  res.status(status).set(HEADERS).send(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}` +
      `button{font:inherit;padding:.6rem 1.2rem;border-radius:.4rem;border:1px solid #1a1a1a;background:#1a1a1a;color:#fff;cursor:pointer}</style>` +
      `</head><body><main><h1>${title}</h1>${body}</main></body></html>`,
  );
}

const notFoundPage = (res: Response) => page(res, 404, 'Link not found', '<p>This link is not valid.</p>');

function failure(req: Request, res: Response, next: NextFunction, error: unknown, logThrottle: LogThrottle): void {
  if (error instanceof ServiceUnavailableError) {
    reportUnavailable(req, error, logThrottle);
    res.setHeader('Retry-After', String(error.retryAfterSeconds));
    return page(res, 503, 'Try again in a moment', '<p>The service is busy. Please try again in a moment.</p>');
  }
  if (error instanceof AppError && error.status === 404) return notFoundPage(res);
  next(error);
}

export function unsubscribeRoutes({ db, channels, log, limitPerMinute, logThrottle }: UnsubscribeRoutesOptions): Router {
  const routes = express.Router();
  const settings = channels ?? DEFAULT_CHANNEL_SETTINGS;
  // Mounted on each route (the token is a route parameter): a valid token is not counted.
  const limitBadTokens = rateLimit({
    windowMs: 60_000,
    limit: limitPerMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'unsubscribe-ip',
    store: new SlidingWindowStore(log, 'rl:unsub:ip:'),
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown'),
    skip: (req) => verifies(req.params.token),
    handler: (req, res) => {
      req.rateLimitedBy = 'unsubscribe';
      page(res, 429, 'Too many requests', '<p>Please try again in a minute.</p>');
    },
  });
  const verifies = (token: unknown): boolean => {
    if (typeof token !== 'string') return false;
    try {
      readUnsubscribeToken(settings, token);
      return true;
    } catch {
      return false;
    }
  };

  routes.get('/:token', limitBadTokens, async (req, res, next) => {
    try {
      const { channel } = await findUnsubscribeTarget(db, settings, req.params.token as string);
      const what = channel === 'email' ? 'emails' : 'WhatsApp messages';
      page(
        res,
        200,
        'Unsubscribe',
        `<p>Stop receiving these ${what}?</p>` +
          // The RFC 8058 body, so that the button and a mail provider's POST are one request.
          `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
      );
    } catch (error) {
      failure(req, res, next, error, logThrottle);
    }
  });

  routes.post('/:token', limitBadTokens, express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res, next) => {
    try {
      readUnsubscribeToken(settings, req.params.token as string);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (!isOneClickBody(req.get('content-type'), body)) {
        return page(res, 400, 'Nothing changed', '<p>An unsubscribe request carries <code>List-Unsubscribe=One-Click</code> (RFC 8058). Open the link to unsubscribe.</p>');
      }
      await unsubscribeByToken(db, settings, req.params.token as string);
      page(res, 200, 'You are unsubscribed', '<p>You will not receive these messages any more.</p>');
    } catch (error) {
      failure(req, res, next, error, logThrottle);
    }
  });

  // A body over the limit or unreadable: a page, not the API's JSON.
  routes.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const status = (error as { status?: number })?.status;
    if (typeof status === 'number' && status >= 400 && status < 500 && !(error instanceof AppError)) {
      return page(res, status, 'Nothing changed', '<p>The request could not be read.</p>');
    }
    next(error);
  });
  return routes;
}
