import type { Request, RequestHandler } from 'express';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import type { Database } from '../db/database';
import type { Logger } from '../logger';
import type { AppRouter } from '../routers/app-router';
import { retryAfterSeconds } from '../trpc/errors';
import './express-types';
import { requestContext } from './request-context';

export function trpcApi({ router, db, logger }: { router: AppRouter; db: Database; logger: Logger }): RequestHandler {
  return createExpressMiddleware({
    router,
    // One call per HTTP request: the rate limit counts requests, and a batch would let one
    // request carry any number of calls (and open that many transactions at once).
    allowBatching: false,
    createContext: ({ req }) => requestContext(req as Request, { db, logger }, 'trpc'),
    responseMeta: ({ errors }) => {
      const retryAfter = errors.map(retryAfterSeconds).find((seconds) => seconds !== undefined);
      return retryAfter === undefined ? {} : { headers: { 'Retry-After': String(retryAfter) } };
    },
    onError: ({ error, req }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR' || error.code === 'SERVICE_UNAVAILABLE') {
        logger.error('request failed', { requestId: (req as Request).id, error: error.cause ?? error });
      }
    },
  });
}
