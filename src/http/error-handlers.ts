import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { LogThrottle } from '../log-throttle';
import './express-types';
import { reportUnavailable } from './report-unavailable';
import { sendError } from './send-error';
import { ServiceUnavailableError } from '../errors';

export const notFound: RequestHandler = (req, res) => sendError(req, res, 404, 'Not found');

interface HttpError {
  status?: number;
  type?: string;
  body?: string;
}

// The parser accepts only objects and arrays: say so when the body was JSON of another kind.
function parseFailure(body: string | undefined): string {
  try {
    JSON.parse(body ?? '');
    return 'Request body must be a JSON object';
  } catch {
    return 'Malformed JSON body';
  }
}

// Errors raised outside the procedures: the body parser's, and anything unexpected.
export function errorHandler(logThrottle: LogThrottle): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    // The database or the rate-limit store is down (the limiter fails closed: README, "Rate
    // limits"). Raised here when it happens before a procedure runs: resolving the key, counting.
    if (error instanceof ServiceUnavailableError) {
      reportUnavailable(req, error, logThrottle);
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return sendError(req, res, 503, error.message);
    }
    const { status, type, body } = (error ?? {}) as HttpError;
    if (type === 'entity.parse.failed') return sendError(req, res, 400, parseFailure(body));
    if (type === 'entity.too.large') return sendError(req, res, 413, 'Request body too large (limit 1 MiB)');
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendError(req, res, 415, 'Unsupported body encoding or charset');
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendError(req, res, status, 'The request body could not be read (check Content-Encoding and Content-Length)');
    }
    req.log.error({ err: error }, 'unhandled error');
    sendError(req, res, 500, 'Internal server error');
  };
}

