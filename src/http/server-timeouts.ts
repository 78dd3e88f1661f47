import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpTimeouts } from '../config';

// Headers come in one go from any real client; 10 s is generous and keeps slow-header
// connections (slowloris) from piling up.
const HEADERS_TIMEOUT_MS = 10_000;
// Node checks the two timeouts above on a timer (30 s by default), so a request is cut up to
// one interval after its deadline: check every second.
const CHECK_INTERVAL_MS = 1_000;

// Node's defaults let a client hold a connection for 300 s by announcing a body it never
// sends. Set deliberately:
// - requestTimeout: the whole request, headers and body, must arrive within it (default
//   20 s: a 1 MiB body at 50 KiB/s). Past it Node answers 408 itself ("Connection: close")
//   and closes the connection. The clock stops once the request is in: handling it is
//   bounded by the dependency timeouts, not by this.
// - headersTimeout: the headers, within 10 s (or the request timeout, if shorter).
// - keepAliveTimeout: an idle kept-alive connection is closed after it (default 65 s). A
//   load balancer or proxy in front keeps its own idle connections to us (AWS ALB 60 s,
//   nginx's upstream keepalive_timeout 60 s): ours must outlast theirs so that they, not we,
//   close an idle connection. Otherwise we can close one just as the proxy sends a request on
//   it, and the client gets a 502. (The old advice that headersTimeout must exceed it no
//   longer applies: since Node 18 the headers clock starts with a request's first byte, not
//   with the idle time before it.)
// - firstRequestTimeoutMs: a connection that has sent no byte this long after it was opened
//   (default 10 s) is closed, without an answer. On Node 20 the headers timeout ends such a
//   connection too (a 408 at the next check: 500 of 500 closed within 12 s), but that rests
//   on Node's tracking of requests in progress, and a fault probe of a deployed build found
//   500 silent sockets all still open after 102 s, each holding a file descriptor. This bound
//   rests on nothing but a timer per connection.
// - timeout (socket inactivity) stays 0: the bounds above cover every wait on the client, and
//   the handler's waits are bounded by the database and Redis timeouts.
// Call it before the server starts listening: Node reads the check interval then.
export function applyServerTimeouts(server: Server, timeouts: HttpTimeouts): void {
  if (server.listening) throw new Error('applyServerTimeouts must be called before the server listens');
  server.requestTimeout = timeouts.requestTimeoutMs;
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, timeouts.requestTimeoutMs);
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.timeout = 0;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    CHECK_INTERVAL_MS,
    timeouts.requestTimeoutMs,
  );
  closeSilentConnections(server, timeouts.firstRequestTimeoutMs);
}

// Not the socket's own timeout: Node's listener on it destroys the socket whatever the state
// of the request, so it would also cut a client half-way through its headers, which is the
// headers timeout's to answer (408). bytesRead counts what the parser took from the socket.
function closeSilentConnections(server: Server, silentMs: number): void {
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, silentMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
