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

// One POST, bounded by timeoutMs from start to the end of the response (a receiver that sends
// headers and then stalls is cut off too). Never follows redirects. The response body is read
// (so the connection can be reused) up to 64 KiB and dropped.
export function sendRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowInsecure: boolean; signal?: AbortSignal },
): Promise<SendOutcome> {
  const started = performance.now();
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const signal = options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
    : AbortSignal.timeout(options.timeoutMs);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      resolve({ status, error, durationMs: Math.round(performance.now() - started) });
    };
    if (target.protocol !== 'https:' && !options.allowInsecure) return finish(null, 'refused: not https');
    // An address literal is connected to without a lookup: check it here.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowInsecure && isIP(literal) !== 0 && isSpecialAddress(literal)) {
      return finish(null, `refused: ${literal} is a refused address`);
    }
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'contact-sequence-service-webhooks/1' },
        lookup: guardedLookup(options.allowInsecure),
        signal,
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
      if (signal.aborted && !options.signal?.aborted) return finish(null, `timeout after ${options.timeoutMs} ms`);
      if (options.signal?.aborted) return finish(null, 'aborted: dispatcher stopping');
      finish(null, errorText(error));
    });
    request.end(body);
  });
}

function errorText(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code ? `${code}: ${error.message}` : error.message).slice(0, 500);
}
