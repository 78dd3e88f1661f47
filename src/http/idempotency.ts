import type { Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/database';
import {
  claimIdempotencyKey,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  releaseIdempotencyKey,
  requestHash,
  storeIdempotentAnswer,
  type StoredAnswer,
} from '../services/idempotency/idempotency-keys';
import './express-types';
import { validationFailed } from './json-body';
import { sendError } from './send-error';

// The headers that describe the result, kept and replayed with it. The rest (RateLimit,
// X-Request-Id) belong to the answering request.
const RESULT_HEADERS = ['content-type', 'location'];

// Answers that are not the request's result: never kept, and they free the key for a retry.
const notKept = (status: number) => status === 401 || status === 429 || status >= 500;

// Idempotency-Key on POST (REST operations and tRPC mutations), with Stripe's semantics
// (docs/idempotency.md). Mounted after authentication and body parsing. A request
// without the header costs nothing here.
export function idempotency(db: Database): RequestHandler {
  return (req, res, next) => {
    const key = req.get('idempotency-key');
    if (key === undefined || req.method !== 'POST' || !req.auth?.ok) return next();
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      return sendError(req, res, validationFailed(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`, 'Idempotency-Key'));
    }
    const accountId = req.auth.key.accountId;
    const hash = requestHash(req.method, req.originalUrl, req.body);
    claimIdempotencyKey(db, { accountId, key, requestHash: hash })
      .then((claim) => {
        if (claim.kind === 'replay') return replay(res, claim.answer);
        if (claim.kind === 'reused') {
          return sendError(req, res, { status: 422, code: 'idempotency_key_reused', message: 'This Idempotency-Key was used with a different request' });
        }
        if (claim.kind === 'in_progress') {
          return sendError(req, res, { status: 409, code: 'idempotency_in_progress', message: 'A request with this Idempotency-Key is still in progress' });
        }
        req.idempotency = { accountId, key, requestHash: hash };
        recordAnswer(req, res, db, { accountId, key });
        next();
      })
      .catch(next);
  };
}

function replay(res: Response, answer: StoredAnswer) {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(answer.status).end(answer.body);
}

// Keeps the answer before it leaves, so a client that retries at once finds it stored. The
// body is what the transport finally writes (REST's error bodies are rewritten in res.end).
function recordAnswer(req: Request, res: Response, db: Database, claim: { accountId: string; key: string }) {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  const collect = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
  };
  res.write = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    // The operation answered from the result an earlier attempt committed: a replay too.
    if (req.idempotency?.replayed && !res.headersSent) res.setHeader('Idempotent-Replayed', 'true');
    const status = res.statusCode;
    const settle = notKept(status)
      ? releaseIdempotencyKey(db, claim)
      : storeIdempotentAnswer(db, { ...claim, answer: { status, body: Buffer.concat(chunks).toString('utf8'), headers: resultHeaders(res) } });
    settle
      .catch((error: unknown) => req.log.error({ err: error }, 'idempotency key not settled'))
      .finally(() => end(...args));
    return res;
  }) as Response['end'];
}

function resultHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of RESULT_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}
