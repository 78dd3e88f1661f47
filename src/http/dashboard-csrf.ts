import type { RequestHandler } from 'express';
import { sendError } from './send-error';

// The session cookie goes with any request the browser makes, so a mutation must prove it
// comes from the dashboard's own pages: a JSON body (a cross-site form cannot send one without
// a preflight, which this server never approves) and an Origin equal to this server's.
// `allowedOrigin` is PUBLIC_BASE_URL's origin when set; else the request's own scheme and host.
export function dashboardCsrf(allowedOrigin?: string): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const expected = allowedOrigin ?? `${req.protocol}://${req.get('host')}`;
    if (req.get('origin') !== expected) return sendError(req, res, { status: 403, code: 'forbidden', message: 'Cross-site request refused' });
    // text/csv (an import's file) is no more a "simple" type than JSON: a cross-site page cannot
    // send it without the preflight either.
    if (!req.is('application/json') && !req.is('text/csv')) return sendError(req, res, { status: 415, code: 'unsupported_media_type', message: 'Content-Type must be application/json' });
    next();
  };
}
