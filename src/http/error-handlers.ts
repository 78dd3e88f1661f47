import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../logger';
import './express-types';
import { sendError } from './send-error';
import { RateLimitUnavailableError } from './rate-limit/sliding-window-store';

export const notFound: RequestHandler = (req, res) => sendError(req, res, 404, 'Not found');

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
      return sendError(req, res, 503, 'Rate limiting is unavailable; retry shortly');
    }
    const { status, type } = (error ?? {}) as HttpError;
    if (type === 'entity.parse.failed') return sendError(req, res, 400, 'Malformed JSON body');
    if (type === 'entity.too.large') return sendError(req, res, 413, 'Request body too large (limit 1 MiB)');
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendError(req, res, 415, 'Unsupported body encoding or charset');
    }
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(req, res, status, 'Bad request');
    logger.error('unhandled error', { requestId: req.id, error });
    sendError(req, res, 500, 'Internal server error');
  };
}

