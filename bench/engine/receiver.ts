import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The webhook steps' receiver: a node:http server on loopback that answers 204 and remembers
// each request's `webhook-id`, and whether the body's `id` was the same (a cheap check that the
// key a receiver would deduplicate on is the step's).

export interface Receiver {
  url: string;
  requests: number;
  // webhook-id -> how many requests carried it
  keys: Map<string, number>;
  mismatched: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver = { requests: 0, keys: new Map<string, number>(), mismatched: 0 } as Receiver;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.requests += 1;
      const key = String(request.headers['webhook-id'] ?? '');
      receiver.keys.set(key, (receiver.keys.get(key) ?? 0) + 1);
      try {
        if ((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id !== key) receiver.mismatched += 1;
      } catch {
        receiver.mismatched += 1;
      }
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

// A receiver that takes each request and never answers: every request to it costs the
// engine its timeout.
export async function startFrozenReceiver(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer(() => {
    requests += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/frozen`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
