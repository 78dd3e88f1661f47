import type { Server } from 'node:http';
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
// - timeout (socket inactivity) stays 0: the three above bound every wait on the client, and
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
}
