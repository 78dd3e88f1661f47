import express, { type Express } from 'express';
import { DEFAULT_AUTH_FAILURE_LIMIT, type Config } from './config';
import type { Database } from './db/database';
import { requireApiKey, resolveApiKey } from './http/api-key-auth';
import { errorHandler, notFound } from './http/error-handlers';
import type { Lifecycle } from './http/graceful-shutdown';
import { healthRoutes, readinessDependencies } from './http/health';
import { jsonBody, requireJsonObject } from './http/json-body';
import { requestId } from './http/request-id';
import { rateLimiters } from './http/rate-limit/limiters';
import { MemorySlidingLog, type SlidingLog } from './http/rate-limit/sliding-window-store';
import { restApi } from './http/rest-api';
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
  // The server's shutdown state, for /readyz (src/server.ts); absent in tests that need none.
  lifecycle?: Lifecycle;
}

export function createApp({ db, config, logger, rateLimitLog, lifecycle }: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(requestId);

  app.use(healthRoutes(readinessDependencies(db, rateLimitLog), logger, lifecycle));

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
  const json = jsonBody();

  app.use('/api/v1', ...keyed, requireApiKey, ...json, requireJsonObject, restApi({ router: appRouter, db, logger }));
  app.use('/trpc', ...keyed, requireApiKey, ...json, trpcApi({ router: appRouter, db, logger }));

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
