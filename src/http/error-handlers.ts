import type { ErrorRequestHandler, RequestHandler } from 'express';
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

