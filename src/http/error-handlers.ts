import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { LogThrottle } from '../logging/log-throttle';
import './express-types';
import { reportUnavailable } from './report-unavailable';
import { notAnObject } from './json-body';
import { sendError, type HttpLayerError } from './send-error';
import { defaultCodeFor } from '../errors/error-codes';
import { ServiceUnavailableError } from '../errors/app-errors';

export const notFound: RequestHandler = (req, res) => sendError(req, res, { status: 404, code: 'not_found', message: 'Not found' });

interface HttpError {
  status?: number;
  type?: string;
  body?: string;
}

// The parser accepts only objects and arrays: say so when the body was JSON of another kind.
function parseFailure(body: string | undefined): HttpLayerError {
  try {
    JSON.parse(body ?? '');
    return notAnObject;
  } catch {
    return { status: 400, code: 'malformed_json', message: 'Malformed JSON body' };
  }
}

// Errors raised outside the procedures: the body parser's, and anything unexpected.
export function errorHandler(logThrottle: LogThrottle): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    // The database or the rate-limit store is down (the limiter fails closed: docs/rate-limits.md).
    // Raised here when it happens before a procedure runs: resolving the key, counting.
    if (error instanceof ServiceUnavailableError) {
      reportUnavailable(req, error, logThrottle);
      res.setHeader('Retry-After', String(error.retryAfterSeconds));
      return sendError(req, res, { status: 503, code: 'service_unavailable', message: error.message });
    }
    const { status, type, body } = (error ?? {}) as HttpError;
    if (type === 'entity.parse.failed') return sendError(req, res, parseFailure(body));
    if (type === 'entity.too.large') return sendError(req, res, { status: 413, code: 'payload_too_large', message: 'Request body too large (limit 1 MiB)' });
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendError(req, res, { status: 415, code: 'unsupported_media_type', message: 'Unsupported body encoding or charset' });
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const message = 'The request body could not be read (check Content-Encoding and Content-Length)';
      return sendError(req, res, { status, code: defaultCodeFor(status), message });
    }
    req.log.error({ err: error }, 'unhandled error');
    sendError(req, res, { status: 500, code: 'internal_error', message: 'Internal server error' });
  };
}

