import type { Request, RequestHandler } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { Database } from '../db/database';
import { ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import type { ChannelSettings } from '../services/channels/channel-settings';
import type { ActivitySettings } from '../services/activities/activity-settings';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import type { AppRouter } from '../routers/app-router';
import { retryAfterSeconds } from '../trpc/errors';
import './express-types';
import { reportUnavailable } from './report-unavailable';
import { requestContext } from './request-context';
import { sendError } from './send-error';

// tRPC refuses a body that is not JSON before it makes a context, so its error would carry no
// request id: refused here instead, in the same envelope.
const requireJsonMutation: RequestHandler = (req, res, next) => {
  const type = req.headers['content-type'];
  if (req.method !== 'POST' || !type || /^application\/json\s*(;|$)/i.test(type)) return next();
  sendError(req, res, { status: 415, code: 'unsupported_media_type', message: 'Content-Type must be application/json' });
};

export function trpcApi({
  router,
  db,
  logThrottle,
  webhooks,
  channels,
  activities,
  imports,
}: {
  router: AppRouter;
  db: Database;
  logThrottle: LogThrottle;
  webhooks?: WebhookSettings;
  channels?: ChannelSettings;
  activities?: ActivitySettings;
  imports?: { dir: string };
}): RequestHandler[] {
  return [requireJsonMutation, createExpressMiddleware({
    router,
    // One call per HTTP request: the rate limit counts requests, and a batch would let one
    // request carry any number of calls (and open that many transactions at once).
    allowBatching: false,
    createContext: ({ req }) => requestContext(req as Request, { db, webhooks, channels, activities, imports }, 'trpc'),
    responseMeta: ({ errors }) => {
      const retryAfter = errors.map(retryAfterSeconds).find((seconds) => seconds !== undefined);
      return retryAfter === undefined ? {} : { headers: { 'Retry-After': String(retryAfter) } };
    },
    onError: ({ error, req }) => {
      if (error.cause instanceof ServiceUnavailableError) reportUnavailable(req as Request, error.cause, logThrottle);
      else if (error.code === 'INTERNAL_SERVER_ERROR') (req as Request).log.error({ err: error.cause ?? error }, 'request failed');
    },
  })];
}
