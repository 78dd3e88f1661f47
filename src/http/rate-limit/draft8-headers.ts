import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';

// The IETF draft-8 RateLimit / RateLimit-Policy headers, byte for byte as express-rate-limit 8
// writes them, but without its SHA-256 of the key on every response: the partition key (`pk`)
// depends only on the key, so it is hashed once per key and remembered. The memo is bounded
// (cleared when full) so a flood of distinct keys cannot grow it without limit.
const MEMO_LIMIT = 10_000;

export function partitionKeys() {
  const memo = new Map<string, string>();
  return (key: string) => {
    let pk = memo.get(key);
    if (pk === undefined) {
      const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
      pk = Buffer.from(hex).toString('base64');
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, pk);
    }
    return pk;
  };
}

const resetSeconds = (info: RateLimitInfo) =>
  info.resetTime ? Math.max(0, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : 0;

export interface Draft8Headers {
  // The limiter's info lives on req[property] (express-rate-limit's requestPropertyName).
  property: string;
  name: string;
  windowMs: number;
}

export function draft8Headers({ property, name, windowMs }: Draft8Headers) {
  const windowSeconds = Math.ceil(windowMs / 1000);
  const pkOf = partitionKeys();
  const info = (req: Request) => (req as unknown as Record<string, RateLimitInfo | undefined>)[property];

  const set = (req: Request, res: Response) => {
    const current = info(req);
    if (!current || res.headersSent) return;
    res.append('RateLimit', `"${name}"; r=${current.remaining}; t=${resetSeconds(current)}`);
    res.append('RateLimit-Policy', `"${name}"; q=${current.limit}; w=${windowSeconds}; pk=:${pkOf(current.key)}:`);
  };

  return {
    // After the limiter, on requests it let through (it sets no info on skipped requests).
    middleware: ((req, res, next) => {
      set(req, res);
      next();
    }) as RequestHandler,
    // In the limiter's handler, on refused requests: the headers and Retry-After.
    refused(req: Request, res: Response) {
      set(req, res);
      const current = info(req);
      if (current && !res.headersSent) res.setHeader('Retry-After', String(resetSeconds(current)));
    },
  };
}
