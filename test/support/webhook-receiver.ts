import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

// A real local HTTP receiver. `respond` decides each answer (status, or 'hang' to never answer).
export async function startReceiver(respond: (request: Received, index: number) => number | 'hang' | Promise<number> = () => 204) {
  const received: Received[] = [];
  const hanging: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body, at: Date.now() };
      const answer = respond(request, received.length);
      received.push(request);
      if (answer === 'hang') {
        hanging.push(() => res.destroy());
        return;
      }
      void Promise.resolve(answer).then((status) => {
        res.statusCode = status;
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: async () => {
      hanging.forEach((release) => release());
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// A clock the test moves by hand.
export function manualClock(start = new Date('2026-11-22T12:00:00.000Z')) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
  };
}
