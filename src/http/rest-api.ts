import type { TRPCError } from '@trpc/server';
import type { Request, RequestHandler, Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import type { Database } from '../db/database';
import { ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import type { AppRouter } from '../routers/app-router';
import type { Context } from '../trpc/context';
import { restErrorFor, type RestError } from '../trpc/errors';
import type { ApiMeta } from '../trpc/init';
import './express-types';
import { reportUnavailable } from './report-unavailable';
import { requestContext } from './request-context';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';

interface RestApiDeps {
  router: AppRouter;
  db: Database;
  logThrottle: LogThrottle;
  webhooks?: WebhookSettings;
}

// The REST surface (/api/v1): the same procedures as /trpc, served by trpc-to-openapi, with
// the three things the adapter does not do itself (docs/architecture.md, "Dependencies and patches"):
// - success statuses other than 200 (procedure meta, or ctx.http.status set at run time);
// - the { error, details } body instead of its tRPC-shaped one (upstream issue #168): the
//   error is captured in onError and the body is replaced as the adapter writes it;
// - a JSON body on DELETE (remove tags): the adapter reads DELETE input from the query only,
//   so the body travels in the context to the restInput middleware (src/trpc/init.ts).
export function restApi({ router, db, logThrottle, webhooks }: RestApiDeps): RequestHandler {
  const successStatusByPath = successStatuses(router);
  const errors = new WeakMap<Request, RestError>();

  const handler = createOpenApiNodeHttpHandler({
    router,
    createContext: ({ req }) => requestContext(req as Request, { db, webhooks }, 'rest'),
    responseMeta: ({ ctx, paths, errors: failures }) => {
      if (failures.length > 0) return {};
      const http = (ctx as Context | undefined)?.http;
      const status = http?.status ?? successStatusByPath.get(paths?.[0] ?? '') ?? 200;
      return { status, headers: http?.headers ?? {} };
    },
    onError: ({ error, req }) => {
      const mapped = restErrorFor(error as TRPCError);
      errors.set(req as Request, mapped);
      if (error.cause instanceof ServiceUnavailableError) reportUnavailable(req as Request, error.cause, logThrottle);
      else if (mapped.status >= 500) (req as Request).log.error({ err: error.cause ?? error }, 'request failed');
    },
  });

  return (req, res, next) => {
    // Media types are case-insensitive (RFC 9110); the adapter compares them as written.
    const type = req.headers['content-type'];
    if (type) req.headers['content-type'] = type.toLowerCase();
    replaceErrorBody(req, res, errors);
    handler(req, res, next).catch(next);
  };
}

function successStatuses(router: AppRouter): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const meta = (procedure as unknown as { _def: { meta?: ApiMeta } })._def.meta;
    if (meta?.successStatus) statuses.set(path, meta.successStatus);
  }
  return statuses;
}

function replaceErrorBody(req: Request, res: Response, errors: WeakMap<Request, RestError>) {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    const mapped = errors.get(req);
    if (!mapped) {
      // 204 has no body, and so no content type.
      if (res.statusCode === 204) res.removeHeader('Content-Type');
      return end(...args);
    }
    res.statusCode = mapped.status;
    if (mapped.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(mapped.retryAfterSeconds));
    // The request id goes last, as in every other error body.
    return end(JSON.stringify({ ...mapped.body, requestId: req.id }));
  }) as Response['end'];
}
