import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { Request, RequestHandler } from 'express';
import type { Database } from '../db/database';
import { AUTH_MESSAGES, authenticateApiKey } from '../services/api-keys';
import './express-types';

// Resolves the x-api-key header once per request, before the rate limiter (which counts per
// key) and before the body is parsed.
export function resolveApiKey(db: Database): RequestHandler {
  return async (req, _res, next) => {
    try {
      req.auth = await authenticateApiKey(db, req.get('x-api-key'));
      next();
    } catch (error) {
      next(error);
    }
  };
}

function failure(req: Request): string | null {
  if (req.auth?.ok) return null;
  return req.auth?.message ?? AUTH_MESSAGES.missing;
}

// A failed authentication is answered before anything else (401 precedes 400, 404, 413, 415),
// on both transports. The accountProcedure middleware checks again for in-process callers.
export const requireApiKey: RequestHandler = (req, res, next) => {
  const message = failure(req);
  if (message === null) return next();
  res.status(401).json({ error: message });
};

// /trpc answers in tRPC's own error envelope, one per call of a batch request
// (`/trpc/a,b?batch=1`), so that tRPC clients read it as UNAUTHORIZED.
export const requireApiKeyForTrpc: RequestHandler = (req, res, next) => {
  const message = failure(req);
  if (message === null) return next();
  const paths = safeDecode(req.path.replace(/^\//, '')).split(',');
  const envelope = (path: string) => ({
    error: {
      code: TRPC_ERROR_CODES_BY_KEY.UNAUTHORIZED,
      message,
      data: { code: 'UNAUTHORIZED', httpStatus: 401, path, details: null },
    },
  });
  res.status(401).json(req.query.batch ? paths.map(envelope) : envelope(paths[0]));
};

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
