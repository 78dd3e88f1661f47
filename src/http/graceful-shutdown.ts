import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';

// Read by /readyz: a load balancer stops sending traffic as soon as the process starts to stop.
export interface Lifecycle {
  readonly stopping: boolean;
}

interface Connection {
  // The response being written on this connection, if a request is in progress.
  response?: ServerResponse;
  idleSince: number;
}

export interface DrainOptions {
  timeoutMs: number;
  // A kept-alive connection must have been idle this long before it is closed, so that a
  // request the client sent just before the signal (still unread in the socket) is served.
  idleGraceMs?: number;
  pollMs?: number;
}

// Stops an HTTP server without dropping a request it was sent:
// - the listening socket closes at once (new connections are refused);
// - a request in progress runs to completion, and its response, like every response from
//   then on, carries `Connection: close`, so the client opens no further request on it;
// - a kept-alive connection with nothing in progress is closed once it has been idle for a
//   moment (idleGraceMs).
// http.Server#close is not used for the first step: since Node 19 it also destroys every idle
// kept-alive connection at once, including one whose next request has arrived but has not yet
// been read, which its client sees as a reset (a request sent before the signal, lost).
export class DrainableServer implements Lifecycle {
  private readonly connections = new Map<Socket, Connection>();
  private stoppingSince: number | undefined;

  constructor(
    private readonly server: Server,
    private readonly now: () => number = Date.now,
  ) {
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { idleSince: this.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
    // Ahead of the app's own listener, so the header is in place before any response starts.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.track(req, res));
  }

  get stopping(): boolean {
    return this.stoppingSince !== undefined;
  }

  get inFlight(): number {
    let count = 0;
    for (const connection of this.connections.values()) if (connection.response) count += 1;
    return count;
  }

  // Resolves true once every connection has closed, false if timeoutMs passed first (the
  // connections still open are then left to the caller: see destroyAll).
  drain({ timeoutMs, idleGraceMs = 250, pollMs = 25 }: DrainOptions): Promise<boolean> {
    this.stoppingSince ??= this.now();
    for (const connection of this.connections.values()) {
      if (connection.response && !connection.response.headersSent) connection.response.setHeader('Connection', 'close');
    }
    net.Server.prototype.close.call(this.server);
    return new Promise((resolve) => {
      const deadline = this.now() + timeoutMs;
      const check = () => {
        this.closeIdle(idleGraceMs);
        if (this.connections.size === 0) return resolve(true);
        if (this.now() >= deadline) return resolve(false);
        setTimeout(check, pollMs);
      };
      check();
    });
  }

  destroyAll(): void {
    for (const socket of this.connections.keys()) socket.destroy();
  }

  private track(req: IncomingMessage, res: ServerResponse) {
    const connection = this.connections.get(req.socket);
    if (!connection) return;
    connection.response = res;
    if (this.stopping) res.setHeader('Connection', 'close');
    res.once('close', () => {
      if (connection.response === res) connection.response = undefined;
      connection.idleSince = this.now();
    });
  }

  private closeIdle(idleGraceMs: number) {
    const now = this.now();
    for (const [socket, connection] of this.connections) {
      // Counted from the signal too: a connection idle for long before it still gets the grace.
      const quietSince = Math.max(connection.idleSince, this.stoppingSince ?? now);
      if (connection.response) continue;
      // A FIN first; a client that never closes its side is cut off a little later.
      if (now - quietSince >= 4 * idleGraceMs) socket.destroy();
      else if (now - quietSince >= idleGraceMs) socket.end();
    }
  }
}
