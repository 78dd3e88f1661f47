import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Metrics } from './metrics';

// GET /metrics in Prometheus's text format. With a token, only `Authorization: Bearer <token>`
// may read it (401 otherwise): the series name routes and failure rates, which are not public.
export function metricsEndpoint(metrics: Metrics, token?: string): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return async (req, res, next) => {
    const given = /^Bearer +(\S+) *$/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (expected && !timingSafeEqual(digest(given), expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return void res.status(401).json({ error: 'Missing or wrong bearer token' });
    }
    try {
      res.setHeader('Content-Type', metrics.registry.contentType);
      res.end(await metrics.registry.metrics());
    } catch (error) {
      next(error);
    }
  };
}

// Equal-length inputs for timingSafeEqual, whatever was sent.
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
