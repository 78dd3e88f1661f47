import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

// One POST, bounded by timeoutMs from start to the end of the response: the name's lookup, the
// connection, the headers and the body (a receiver that sends headers and then stalls is cut off
// too, and its response does not count). Never follows redirects. The response body is read (so
// the connection can be reused) up to maxResponseBytes: kept when asked, else dropped; a longer
// one is cut (its status still counts, its body is null). `signal` (a dispatcher's or the
// engine's stop) ends the request early, as 'aborted: ...'. Shared by webhook deliveries
// (src/services/webhooks/send-request.ts) and the WhatsApp client
// (src/services/messages/whatsapp-client.ts).
//
// The bound is a plain timer that destroys the request, held by the timer list until cleared:
// not AbortSignal.timeout in AbortSignal.any, which on Node 20 never fires once the garbage
// collector has taken the timeout signal (a receiver that never answered held its socket for
// 16 minutes). test/services/webhooks/send-request-timeout.test.ts forces collections during the
// wait on every Node the service starts on.

export interface PostOutcome {
  status: number | null;
  // The response body, when keepBody was asked and it was read whole.
  body: Buffer | null;
  error: string | null;
  // Cut short by the signal (the caller's stop), not by the receiver.
  aborted: boolean;
  durationMs: number;
}

export interface PostOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  lookup?: LookupFunction;
  agent?: http.Agent | false;
  maxResponseBytes?: number;
  keepBody?: boolean;
  // How a request error is said ('ECONNREFUSED: ...' unless given).
  describeError?: (error: Error) => string;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

export function boundedPost(url: URL, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  const started = performance.now();
  const client = url.protocol === 'https:' ? https : http;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let request: http.ClientRequest | undefined;
    const finish = (outcome: Omit<PostOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stopping);
      resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
    };
    // The outcome is decided here, whatever events the destroyed request emits afterwards.
    const cut = (reason: string, aborted: boolean) => {
      finish({ status: null, body: null, error: reason, aborted });
      request?.destroy(new Error(reason));
    };
    const stopping = () => cut('aborted: dispatcher stopping', true);
    if (options.signal?.aborted) return stopping();
    timer = setTimeout(() => cut(`timeout after ${options.timeoutMs} ms`, false), options.timeoutMs);
    options.signal?.addEventListener('abort', stopping, { once: true });
    request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
        ...(options.lookup && { lookup: options.lookup }),
        ...(options.agent !== undefined && { agent: options.agent }),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let received = 0;
        let whole = true;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) {
            whole = false;
            response.destroy();
          } else if (options.keepBody) chunks.push(chunk);
        });
        const done = () =>
          finish({ status: response.statusCode ?? null, body: options.keepBody && whole ? Buffer.concat(chunks) : null, error: null, aborted: false });
        response.on('close', done);
        response.on('error', done);
      },
    );
    request.on('error', (error) => finish({ status: null, body: null, error: (options.describeError ?? errorText)(error), aborted: false }));
    request.end(body);
  });
}

export function errorText(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code ? `${code}: ${error.message}` : error.message).slice(0, 500);
}
