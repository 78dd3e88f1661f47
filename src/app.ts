import express, { type Express, type RequestHandler } from 'express';
import { DEFAULT_AUTH_FAILURE_LIMIT, type Config } from './config';
import type { Database } from './db/database';
import { requireApiKey, resolveApiKey } from './http/api-key-auth';
import { errorHandler, notFound } from './http/error-handlers';
import { healthRoutes } from './http/health';
import { requestId } from './http/request-id';
import { rateLimiters } from './http/rate-limit/limiters';
import { MemorySlidingLog, type SlidingLog } from './http/rate-limit/sliding-window-store';
import { restApi } from './http/rest-api';
import { sendError } from './http/send-error';
import { nestsDeeperThan } from './schemas/text';
import { trpcApi } from './http/trpc-api';
import type { Logger } from './logger';
import { docsPage } from './openapi/docs-page';
import { buildOpenApiDocument } from './openapi/document';
import { appRouter } from './routers/app-router';

export interface AppDeps {
  db: Database;
  config: Pick<Config, 'rateLimitPerMinute'> & Partial<Pick<Config, 'authFailureLimitPerMinute'>>;
  logger: Logger;
  // Where rate-limit hits are kept: this process's memory unless given (Redis, shared).
  rateLimitLog?: SlidingLog;
}

export const BODY_LIMIT = '1mb';
const MAX_BODY_DEPTH = 32;

export function createApp({ db, config, logger, rateLimitLog }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(requestId);

  app.use(healthRoutes(db, logger));

  // Public: the contract and its reference page need no key.
  const document = buildOpenApiDocument(appRouter);
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/docs', ...docsPage(document));

  const keyed = [
    resolveApiKey(db),
    ...rateLimiters({
      perKeyPerMinute: config.rateLimitPerMinute,
      failedAuthPerIpPerMinute: config.authFailureLimitPerMinute ?? DEFAULT_AUTH_FAILURE_LIMIT,
      log: rateLimitLog ?? new MemorySlidingLog(),
    }),
  ];
  // express.json accepts `application/json; charset=utf-8`, which the REST adapter alone does
  // not. A GET's body is never read: its input is the path and the query.
  const parseJson = express.json({ limit: BODY_LIMIT });
  const json: RequestHandler = (req, res, next) => (req.method === 'GET' ? next() : parseJson(req, res, next));
  // Deeper than anything the API takes (customFields inside a batch item is 20 levels), and
  // shallow enough for the recursive code downstream: tRPC serialises the input before any
  // validation runs.
  const shallowJson: RequestHandler = (req, res, next) =>
    nestsDeeperThan(req.body, MAX_BODY_DEPTH)
      ? sendError(req, res, 400, `Request body is nested deeper than ${MAX_BODY_DEPTH} levels`)
      : next();
  const jsonObject: RequestHandler = (req, res, next) => {
    const body = req.body as unknown;
    if (body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body))) return next();
    sendError(req, res, 400, 'Request body must be a JSON object');
  };

  app.use('/api/v1', ...keyed, requireApiKey, json, shallowJson, jsonObject, restApi({ router: appRouter, db, logger }));
  app.use('/trpc', ...keyed, requireApiKey, json, shallowJson, trpcApi({ router: appRouter, db, logger }));

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
