import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isSpecialAddress, RefusedAddressError } from './address-policy';

export interface SendOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

// One POST, bounded by timeoutMs from start to the end of the response: the name's lookup, the
// connection, the headers and the body (a receiver that sends headers and then stalls is cut off
// too, and its response does not count). Never follows redirects. The response body is read (so
// the connection can be reused) up to 64 KiB and dropped. `signal` (the dispatcher's or the
// engine's stop) ends the request early, as 'aborted: ...'.
//
// The bound is a plain timer that destroys the request, held by the timer list until cleared:
// not AbortSignal.timeout in AbortSignal.any, which on Node 20 never fires once the garbage
// collector has taken the timeout signal (a receiver that never answered held its socket for
// 16 minutes). test/services/webhooks/send-request-timeout.test.ts forces collections during the
// wait on every Node the service starts on.
export function sendRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowInsecure: boolean; signal?: AbortSignal },
): Promise<SendOutcome> {
  const started = performance.now();
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let request: http.ClientRequest | undefined;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stopping);
      resolve({ status, error, durationMs: Math.round(performance.now() - started) });
    };
    // The outcome is decided here, whatever events the destroyed request emits afterwards.
    const cut = (reason: string) => {
      finish(null, reason);
      request?.destroy(new Error(reason));
    };
    const stopping = () => cut('aborted: dispatcher stopping');
    if (target.protocol !== 'https:' && !options.allowInsecure) return finish(null, 'refused: not https');
    // An address literal is connected to without a lookup: check it here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowInsecure && isIP(literal) !== 0 && isSpecialAddress(literal)) {
      return finish(null, `refused: ${literal} is a refused address`);
    }
    if (options.signal?.aborted) return stopping();
    timer = setTimeout(() => cut(`timeout after ${options.timeoutMs} ms`), options.timeoutMs);
    options.signal?.addEventListener('abort', stopping, { once: true });
    request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'contact-sequence-service-webhooks/1' },
        lookup: guardedLookup(options.allowInsecure),
        // A fresh connection per attempt: a pooled socket would skip the address check.
        agent: false,
      },
      (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) response.destroy();
        });
        response.on('close', () => finish(response.statusCode ?? null, null));
        response.on('error', () => finish(response.statusCode ?? null, null));
      },
    );
    request.on('error', (error) => {
      if (error instanceof RefusedAddressError) return finish(null, `refused: ${error.message}`);
      finish(null, errorText(error));
    });
    request.end(body);
  });
}

function errorText(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code ? `${code}: ${error.message}` : error.message).slice(0, 500);
}
