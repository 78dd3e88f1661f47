import { isIP } from 'node:net';
import { boundedPost, errorText } from '../bounded-post';
import { guardedLookup, isSpecialAddress, RefusedAddressError } from './address-policy';

export interface SendOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

// One webhook POST (src/services/bounded-post.ts: bounded by timeoutMs from start to the end of
// the response, never following redirects, the response read up to 64 KiB and dropped), to an
// address the policy allows: https only and no special-use address, unless allowInsecure.
// `signal` (the dispatcher's or the engine's stop) ends the request early, as 'aborted: ...'.
export async function sendRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowInsecure: boolean; signal?: AbortSignal },
): Promise<SendOutcome> {
  const target = new URL(url);
  if (target.protocol !== 'https:' && !options.allowInsecure) return { status: null, error: 'refused: not https', durationMs: 0 };
  // An address literal is connected to without a lookup: check it here.
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowInsecure && isIP(literal) !== 0 && isSpecialAddress(literal)) {
    return { status: null, error: `refused: ${literal} is a refused address`, durationMs: 0 };
  }
  const { status, error, durationMs } = await boundedPost(
    target,
    { ...headers, 'content-type': 'application/json', 'user-agent': 'contact-sequence-service-webhooks/1' },
    body,
    {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      lookup: guardedLookup(options.allowInsecure),
      // A fresh connection per attempt: a pooled socket would skip the address check.
      agent: false,
      describeError: (failure) => (failure instanceof RefusedAddressError ? `refused: ${failure.message}` : errorText(failure)),
    },
  );
  return { status, error, durationMs };
}
