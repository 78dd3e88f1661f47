import { TRPCError } from '@trpc/server';
import type { Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/database';
import { ServiceUnavailableError } from '../errors/app-errors';
import type { LogThrottle } from '../logging/log-throttle';
import type { AppRouter } from '../routers/app-router';
import type { Context } from '../trpc/context';
import { restErrorFor } from '../trpc/errors';
import { createCallerFactory } from '../trpc/init';
import type { ChannelSettings } from '../services/channels/channel-settings';
import type { ActivitySettings } from '../services/activities/activity-settings';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';
import './express-types';
import { reportUnavailable } from './report-unavailable';
import { requestContext } from './request-context';
import { restInput } from './rest-input';
import { allowedMethods, matchRoute, normalizePath, restRoutes, type RouteMatch } from './rest-routes';
import { sendError } from './send-error';

interface RestApiDeps {
  router: AppRouter;
  db: Database;
  logThrottle: LogThrottle;
  webhooks?: WebhookSettings;
  channels?: ChannelSettings;
  activities?: ActivitySettings;
  imports?: { dir: string };
}

type Call = (input: unknown) => Promise<unknown>;

// The REST surface (/api/v1): the same procedures as /trpc, called through tRPC's server-side
// caller (so through the same middlewares), routed by their openapi meta. trpc-to-openapi
// still writes the OpenAPI document from that meta; its request handler is not used: made
// cheap enough, it needed a patch of its build that every upgrade would break
// (patches/README.md). Unknown paths and methods go on to the app's 404.
export function restApi({ router, db, logThrottle, webhooks, channels, activities, imports }: RestApiDeps): RequestHandler {
  const routes = restRoutes(router);
  const createCaller = createCallerFactory(router);
  const deps = { db, webhooks, channels, activities, imports };

  async function serve(req: Request, res: Response, { route, params }: RouteMatch): Promise<void> {
    try {
      const takesBody = req.method !== 'GET' && req.method !== 'DELETE';
      // A POST with nothing in it (rotate-secret, test) is an empty object: there is no body to
      // label, so no Content-Type is asked for.
      if (takesBody && hasNoBody(req)) req.body = {};
      else if (takesBody) refuseUnlessJson(req.headers['content-type']);
      const input = route.input.takesNoInput ? undefined : restInput(req, route, params, takesBody);
      route.input.markCoercible();
      const ctx = requestContext(req, deps, 'rest');
      let call: unknown = createCaller(ctx);
      for (const segment of route.segments) call = (call as Record<string, unknown>)[segment];
      const data = await (call as Call)(input);
      sendData(res, ctx, route.successStatus, data);
    } catch (cause) {
      sendFailure(req, res, errorFrom(cause), logThrottle);
    }
  }

  return (req, res, next) => {
    // A WHATWG URL, as the previous adapter matched on: dot segments resolved, backslashes read
    // as slashes, what must be percent-encoded encoded.
    const url = req.url.startsWith('/') ? new URL(`http://127.0.0.1${req.url}`) : new URL(req.url);
    const pathname = normalizePath(url.pathname);
    const found = matchRoute(routes, req.method, pathname);
    if (found) return void serve(req, res, found).catch(next);
    // The path exists under other methods: 405 with them in Allow (RFC 9110), not a 404.
    const allowed = allowedMethods(routes, pathname);
    if (allowed.length === 0) return next();
    res.setHeader('Allow', allowed.join(', '));
    sendError(req, res, { status: 405, code: 'method_not_allowed', message: `Method ${req.method} is not allowed here; use ${allowed.join(', ')}` });
  };
}

// A POST, PUT or PATCH must say its body is JSON, even an empty one. express.json has parsed it
// already (any charset it supports, any letter case); the media type is compared as a prefix,
// as before, and case-insensitively (RFC 9110).
function refuseUnlessJson(type: string | undefined) {
  if (type?.toLowerCase().startsWith('application/json')) return;
  throw new TRPCError({
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: type ? `Unsupported content-type "${type}"` : 'Missing content-type header',
  });
}

// No Content-Type and no content: neither a length above 0 nor a chunked body.
function hasNoBody(req: Request): boolean {
  if (req.headers['content-type'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const length = req.headers['content-length'];
  return length === undefined || Number(length) === 0;
}

export function sendData(res: Response, ctx: Context, successStatus: number | undefined, data: unknown) {
  res.statusCode = ctx.http.status ?? successStatus ?? 200;
  res.setHeader('Content-Type', 'application/json');
  for (const [name, value] of Object.entries(ctx.http.headers)) {
    if (value !== undefined) res.setHeader(name, value);
  }
  // 204 has no body, and so no content type.
  if (res.statusCode === 204) res.removeHeader('Content-Type');
  res.end(JSON.stringify(data));
}

// Anything thrown that is not a TRPCError is a 500 whose cause is kept for the log.
export function errorFrom(cause: unknown): TRPCError {
  if (cause instanceof Error && cause.name === 'TRPCError') return cause as TRPCError;
  const error = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error', cause: cause instanceof Error ? cause : undefined });
  if (cause instanceof Error && cause.stack) error.stack = cause.stack;
  return error;
}

// The { error, code, details?, requestId } body, from the mapping both transports share.
export function sendFailure(req: Request, res: Response, error: TRPCError, logThrottle: LogThrottle) {
  const mapped = restErrorFor(error);
  if (error.cause instanceof ServiceUnavailableError) reportUnavailable(req, error.cause, logThrottle);
  else if (mapped.status >= 500) req.log.error({ err: error.cause ?? error }, 'request failed');
  res.statusCode = mapped.status;
  res.setHeader('Content-Type', 'application/json');
  if (mapped.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(mapped.retryAfterSeconds));
  // The request id goes last, as in every other error body.
  res.end(JSON.stringify({ ...mapped.body, requestId: req.id }));
}
