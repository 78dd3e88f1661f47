import type { Request, RequestHandler, Response } from 'express';
import type { Database } from '../db/database';
import { withoutWriteDeadline, withWriteDeadline } from '../db/sql/write-deadline';
import { LogThrottle } from '../logging/log-throttle';
import { failureCause } from '../services/background/failure-cause';
import type { Timers } from '../services/background/timers';
import { ClaimReleases, type OwnedClaim } from '../services/idempotency/claim-releases';
import {
  claimIdempotencyKey,
  claimLifetimeMs,
  DEFAULT_COMMIT_MARGIN_MS,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENT_REQUEST_DEADLINE_MS,
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

// How long the response to an answer that is not kept waits for its claim's release: enough
// for a database that answers (a millisecond or two), so that a retry sent at once finds the key
// free; a database that does not answer gets it in the background (ClaimReleases).
const RELEASE_GRACE_MS = 100;

export interface IdempotencyOptions {
  // The process's one (an outage is one line per 10 s whoever meets it).
  logThrottle?: LogThrottle;
  // The clock of claims and deadlines and the timers of releases retried; tests move them.
  timers?: Timers;
  // A keyed request commits nothing after this long (IDEMPOTENT_REQUEST_DEADLINE_MS).
  deadlineMs?: number;
  // What its last COMMIT may take: the statement deadline (DB_QUERY_TIMEOUT_MS).
  commitMarginMs?: number;
}

// Idempotency-Key on POST (REST operations and tRPC mutations), with Stripe's semantics
// (docs/idempotency.md). Mounted after authentication and body parsing. A request
// without the header costs nothing here.
// A request that claims a key runs under its deadline (src/db/sql/write-deadline.ts), and its
// claim lasts that long plus the COMMIT's margin: so the claim never outlives the request's
// writes, and a claim whose release never reached the database is free seconds later, not a
// minute.
export function idempotency(db: Database, options: IdempotencyOptions = {}): RequestHandler {
  const timers = options.timers;
  const now = timers ? () => timers.now() : Date.now;
  const deadlineMs = options.deadlineMs ?? IDEMPOTENT_REQUEST_DEADLINE_MS;
  const lifetimeMs = claimLifetimeMs(deadlineMs, options.commitMarginMs ?? DEFAULT_COMMIT_MARGIN_MS);
  const logThrottle = options.logThrottle ?? new LogThrottle();
  const releases = new ClaimReleases(db, { logThrottle, timers });
  // Resolves when work has ended, or after ms, whichever comes first.
  const atMost = (work: Promise<unknown>, ms: number) =>
    new Promise<void>((resolve) => {
      const handle = timers ? timers.setTimeout(resolve, ms) : setTimeout(resolve, ms);
      (handle as { unref?: () => void }).unref?.();
      void work.finally(() => {
        if (timers) timers.clearTimeout(handle);
        else clearTimeout(handle as NodeJS.Timeout);
        resolve();
      });
    });
  return (req, res, next) => {
    const key = req.get('idempotency-key');
    if (key === undefined || req.method !== 'POST' || !req.auth?.ok) return next();
    if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      return sendError(req, res, validationFailed(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`, 'Idempotency-Key'));
    }
    const accountId = req.auth.key.accountId;
    const hash = requestHash(req.method, req.originalUrl, req.body);
    const claimedAt = now();
    const claimOnce = () => claimIdempotencyKey(db, { accountId, key, requestHash: hash, now: new Date(claimedAt), lockedUntil: new Date(claimedAt + lifetimeMs) });
    claimOnce()
      // A release this process still owes on the key (its request ended in 503 while the
      // database was away) is tried now: the database has just answered.
      .then(async (claim) => (claim.kind === 'in_progress' && (await releases.settle(accountId, key)) ? claimOnce() : claim))
      .then((claim) => {
        if (claim.kind === 'replay') return replay(res, claim.answer);
        if (claim.kind === 'reused') {
          return sendError(req, res, { status: 422, code: 'idempotency_key_reused', message: 'This Idempotency-Key was used with a different request' });
        }
        if (claim.kind === 'in_progress') {
          return sendError(req, res, { status: 409, code: 'idempotency_in_progress', message: 'A request with this Idempotency-Key is still in progress' });
        }
        req.idempotency = { accountId, key, requestHash: hash };
        recordAnswer(req, res, { accountId, key, lockedUntil: claim.lockedUntil }, {
          store: (answer) => storeIdempotentAnswer(db, { accountId, key, answer }),
          release: (owned) => atMost(releases.release(owned, req.log), RELEASE_GRACE_MS),
          notSettled: (error) =>
            logThrottle.log(req.log, 'error', failureCause(error, 'idempotency'), { err: error, idempotencyKey: key }, 'idempotency key not settled'),
        });
        withWriteDeadline({ at: claimedAt + deadlineMs, now }, next);
      })
      .catch(next);
  };
}

function replay(res: Response, answer: StoredAnswer) {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(answer.status).end(answer.body);
}

interface Settle {
  store(answer: StoredAnswer): Promise<void>;
  // Resolves once the release is done or has gone to the background.
  release(claim: OwnedClaim): Promise<unknown>;
  notSettled(error: unknown): void;
}

// Keeps the answer before it leaves, so a client that retries at once finds it stored. The
// body is what the transport finally writes (REST's error bodies are rewritten in res.end).
// An answer that is not kept gives the claim back; the response waits for that only while the
// database answers at once (RELEASE_GRACE_MS), never through an outage.
function recordAnswer(req: Request, res: Response, claim: OwnedClaim, settleWith: Settle) {
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
    // The key's bookkeeping, not the request's work: the request's deadline does not refuse it.
    const settle = withoutWriteDeadline(() =>
      notKept(status)
        ? settleWith.release(claim)
        : settleWith.store({ status, body: Buffer.concat(chunks).toString('utf8'), headers: resultHeaders(res) }),
    );
    settle.catch((error: unknown) => settleWith.notSettled(error)).finally(() => end(...args));
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
