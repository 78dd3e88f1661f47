import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { Request, Response } from 'express';
import type { ErrorCode } from '../errors/error-codes';
import type { IssueDetail } from '../errors/app-errors';
import { decodeOrKeep } from './url-decode';
import './express-types';

// Errors the HTTP layer answers itself, before any procedure runs (authentication, rate
// limits, body parsing, Idempotency-Key), in the shape each transport's clients read:
// { error, code, requestId } on REST, and tRPC's error envelope on /trpc (which takes one
// call per request). Given { error }, a tRPC client reports "Unable to transform response
// from server".

const TRPC_CODE_FOR_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'PARSE_ERROR',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

export interface HttpLayerError {
  status: number;
  code: ErrorCode;
  message: string;
  details?: IssueDetail[];
}

export function sendError(req: Request, res: Response, { status, code, message, details }: HttpLayerError): void {
  res.status(status);
  const pathname = req.originalUrl.split('?')[0];
  const requestId = req.id;
  if (!pathname.startsWith('/trpc/')) return void res.json({ error: message, code, requestId, ...(details && { details }) });
  const trpcCode = status === 400 && code === 'validation_failed' ? 'BAD_REQUEST' : (TRPC_CODE_FOR_STATUS[status] ?? 'INTERNAL_SERVER_ERROR');
  const path = decodeOrKeep(pathname.slice('/trpc/'.length));
  res.json({
    error: {
      code: TRPC_ERROR_CODES_BY_KEY[trpcCode],
      message,
      data: { code: trpcCode, appCode: code, httpStatus: status, path, requestId, details: details ?? null },
    },
  });
}
