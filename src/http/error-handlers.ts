import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logger';
import './express-types';
import { RateLimitUnavailableError } from './rate-limit/sliding-window-store';

export const notFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: 'Not found' });
};

interface HttpError {
  status?: number;
  type?: string;
}

// Errors raised outside the procedures: the body parser's, and anything unexpected.
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof RateLimitUnavailableError) {
      // Fail closed: without its shared store the limit cannot be kept (README, "Rate limits").
      logger.error('rate limit store unavailable', { requestId: req.id, error: (error.cause as Error)?.message });
      res.setHeader('Retry-After', '5');
      return void res.status(503).json({ error: 'Rate limiting is unavailable; retry shortly' });
    }
    const { status, type } = (error ?? {}) as HttpError;
    // The body parser runs before the procedures' auth check on /trpc: a failed key is still
    // answered first (401 precedes 400 and 413).
    if (req.auth && !req.auth.ok && typeof status === 'number' && status < 500) {
      return void unauthorized(req, res, req.auth.message);
    }
    if (type === 'entity.parse.failed') return void res.status(400).json({ error: 'Malformed JSON body' });
    if (type === 'entity.too.large') return void res.status(413).json({ error: 'Request body too large (limit 1 MiB)' });
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return void res.status(415).json({ error: 'Unsupported body encoding or charset' });
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return void res.status(status).json({ error: 'Bad request' });
    }
    logger.error('unhandled error', { requestId: req.id, error });
    res.status(500).json({ error: 'Internal server error' });
  };
}

// In the shape the transport's clients read: tRPC's error envelope on /trpc, { error } elsewhere.
function unauthorized(req: Request, res: Response, message: string) {
  const trpcPath = /^\/trpc\/([^?]*)/.exec(req.originalUrl)?.[1];
  if (trpcPath === undefined) return void res.status(401).json({ error: message });
  res.status(401).json({
    error: {
      code: TRPC_ERROR_CODES_BY_KEY.UNAUTHORIZED,
      message,
      data: { code: 'UNAUTHORIZED', httpStatus: 401, path: trpcPath, details: null },
    },
  });
}
