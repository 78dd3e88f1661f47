import type { RequestHandler } from 'express';
import type { Database } from '../db/database';
import { AuthenticationError } from '../errors/app-errors';
import { authenticateApiKey } from '../services/api-keys';
import './express-types';
import { sendError } from './send-error';

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

// A failed authentication is answered before anything else (401 precedes 400, 404, 413, 415),
// on both transports. The accountProcedure middleware checks again for in-process callers.
export const requireApiKey: RequestHandler = (req, res, next) => {
  if (req.auth?.ok) return next();
  const { code, message } = new AuthenticationError(req.auth?.code ?? 'missing_api_key');
  sendError(req, res, { status: 401, code, message });
};
