import type { RequestHandler } from 'express';
import type { Database } from '../db/database';
import { authenticateApiKey } from '../services/api-keys';
import './express-types';

// Resolves the x-api-key header once per request, before the rate limiter (which counts per
// key) and before the body is parsed (401 precedes 400).
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

// REST answers a failed authentication here, before anything else. (/trpc leaves it to the
// accountProcedure middleware, so that tRPC clients get an error in their own shape.)
export const requireApiKey: RequestHandler = (req, res, next) => {
  if (req.auth?.ok) return next();
  res.status(401).json({ error: req.auth?.message ?? 'Missing x-api-key header' });
};
