import type { Request, RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';
import './express-types';
import { assignRequestId } from './request-id';
import type { RouteOf } from './route-template';

// Probes and scrapes come every few seconds from machines: their successes are logged at debug.
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

// One line per request, when it is answered, and req.log: a child logger whose every line
// carries the request id (`reqId`, the X-Request-Id the client sees). The line names the route
// template, never the URL (it carries ids and emails), and no header or body is logged.
//
// Levels: info; 5xx error, but 503 info: an outage's 503s are logged once per 10 s per cause
// (src/log-throttle.ts), and at LOG_LEVEL=warn one line per 503 would undo that.
export function accessLog(logger: Logger, routeOf: RouteOf): RequestHandler {
  const line = (req: Request, res: Response, durationMs: number) => ({
    method: req.method,
    route: routeOf(req),
    status: res.statusCode,
    durationMs,
    ...(req.auth?.ok && { accountId: req.auth.key.accountId, keyId: req.auth.key.keyId }),
    ...(req.rateLimitedBy && { limiter: req.rateLimitedBy }),
    ...(req.unavailableCause && { cause: req.unavailableCause }),
  });
  const message = (req: Request, res: Response) =>
    !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted';
  return pinoHttp<Request, Response>({
    logger,
    genReqId: assignRequestId,
    quietReqLogger: true,
    quietResLogger: true,
    // The logger's own serializers (the safe `err` one) must not be replaced by pino-http's.
    wrapSerializers: false,
    customLogLevel: (req, res) => {
      if (res.statusCode >= 500 && res.statusCode !== 503) return 'error';
      if (res.statusCode < 400 && PROBES.has(routeOf(req))) return 'debug';
      return 'info';
    },
    customSuccessObject: (req, res, value: { responseTime: number }) => line(req, res, value.responseTime),
    customErrorObject: (req, res, _error, value: { responseTime: number }) => line(req, res, value.responseTime),
    customSuccessMessage: message,
    customErrorMessage: message,
  }) as unknown as RequestHandler;
}
