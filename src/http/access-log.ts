import type { Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logging/logger';
import './express-types';
import { assignRequestId } from './request-id';
import type { RouteOf } from './route-template';

// Probes and scrapes come every few seconds from machines: their successes are logged at debug.
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

const CHILD = Symbol('requestLogger');
type WithChild = Request & { [CHILD]?: Logger };

// One line per request, when it is answered, and req.log: a logger whose every line carries
// the request id (`reqId`, the X-Request-Id the client sees). The line names the route
// template, never the URL (it carries ids and emails), and no header or body is logged.
//
// Levels: info; 5xx error, but 503 info: an outage's 503s are logged once per 10 s per cause
// (src/logging/log-throttle.ts), and at LOG_LEVEL=warn one line per 503 would undo that.
//
// Cost (issue 8): pino-http made two child loggers per request, one of them bound to the whole
// IncomingMessage, and was about 30% of a GET's CPU. Here a request costs one listener and one
// line of plain fields. req.log is made on first use only (error paths), from the app's request
// prototype. The line skips the logger's redaction pass (8 µs a line, its wildcard paths walk
// every field): every field of it is set here, from values that are never secret.
export function accessLog(app: Express, logger: Logger, routeOf: RouteOf): RequestHandler {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: WithChild): Logger {
      return (this[CHILD] ??= logger.child({ reqId: this.id }));
    },
    set(this: WithChild, value: Logger) {
      this[CHILD] = value;
    },
  });
  const lines = logger.child({}, { redact: [] });

  const write = (req: Request, res: Response, startedAt: number, bytesBefore: number) => {
    const status = res.statusCode;
    const route = routeOf(req);
    const level = status >= 500 && status !== 503 ? 'error' : status < 400 && PROBES.has(route) ? 'debug' : 'info';
    if (!lines.isLevelEnabled(level)) return;
    lines[level](
      {
        reqId: req.id,
        method: req.method,
        route,
        status,
        durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
        bytesSent: (req.socket?.bytesWritten ?? bytesBefore) - bytesBefore,
        ...(req.auth?.ok && { accountId: req.auth.key.accountId, keyId: req.auth.key.keyId }),
        ...(req.rateLimitedBy && { limiter: req.rateLimitedBy }),
        ...(req.unavailableCause && { cause: req.unavailableCause }),
      },
      !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted',
    );
  };

  return (req, res, next) => {
    const startedAt = performance.now();
    // Headers and body, as nginx's $bytes_sent: what the socket carried for this response
    // (one response at a time per connection; Node computes Content-Length without setting it).
    const bytesBefore = req.socket?.bytesWritten ?? 0;
    req.id = assignRequestId(req, res);
    // 'close' comes once per response: after it is sent, or when the client went away first.
    res.once('close', () => write(req, res, startedAt, bytesBefore));
    next();
  };
}
