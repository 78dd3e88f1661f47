import type { RequestHandler } from 'express';
import type { Metrics } from './metrics';
import '../http/express-types';
import type { RouteOf } from '../http/route-template';

// Times every answered request, and counts 429s by limiter and 503s by cause, from what the
// limiter and the 503 paths noted on the request.
export function requestMetrics(metrics: Metrics, routeOf: RouteOf): RequestHandler {
  return (req, res, next) => {
    const end = metrics.requestDuration.startTimer();
    res.once('finish', () => {
      const status = res.statusCode;
      end({ method: req.method, route: routeOf(req), status: String(status) });
      if (status === 429) metrics.rateLimited.inc({ limiter: req.rateLimitedBy ?? 'other' });
      if (status === 503) metrics.unavailable.inc({ cause: req.unavailableCause ?? 'other' });
    });
    next();
  };
}
