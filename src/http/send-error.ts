import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { Request, Response } from 'express';
import { decodeOrKeep } from '../url-decode';

// Errors the HTTP layer answers itself, before any procedure runs (authentication, rate
// limits, body parsing), in the shape each transport's clients read: { error } on REST, and
// tRPC's error envelope on /trpc (which takes one call per request). Given { error }, a tRPC
// client reports "Unable to transform response from server".

const TRPC_CODE_FOR_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'PARSE_ERROR',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

export function sendError(req: Request, res: Response, status: number, message: string): void {
  res.status(status);
  const pathname = req.originalUrl.split('?')[0];
  if (!pathname.startsWith('/trpc/')) return void res.json({ error: message });
  const code = TRPC_CODE_FOR_STATUS[status] ?? 'INTERNAL_SERVER_ERROR';
  const path = decodeOrKeep(pathname.slice('/trpc/'.length));
  res.json({
    error: { code: TRPC_ERROR_CODES_BY_KEY[code], message, data: { code, httpStatus: status, path, details: null } },
  });
}
