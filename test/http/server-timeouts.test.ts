import http, { type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { loadConfig } from '../../src/config';
import { applyServerTimeouts } from '../../src/http/server-timeouts';
import { testApp } from '../support/app';
import { buildTenant } from '../support/factories';
import { sleep } from '../support/timing';

// docs/operations.md "Timeouts": a client cannot hold a connection by announcing a body (or headers) it
// never sends, and idle kept-alive connections outlast a load balancer's. A real listening
// server and a raw socket, since what counts is what the client receives on the wire.

// The production setting is 20 s; the same code with a shorter one, passed in.
const REQUEST_TIMEOUT_MS = 500;
const KEEP_ALIVE_TIMEOUT_MS = 1_000;
// 10 s in production.
const FIRST_REQUEST_TIMEOUT_MS = 300;
// Node checks request deadlines on a timer: every second, or every request timeout if shorter.
const CHECK_MS = 500;
// Node closes an idle connection this long after the keep-alive timeout it advertises, so
// that a client reusing it at the advertised last moment does not meet a reset.
const NODE_KEEP_ALIVE_BUFFER_MS = 1_000;

interface Exchange {
  received: string;
  // From the last byte sent to the connection's close, in ms.
  closedAfterMs: number;
}

// Sends `text` and reads until the server closes the connection.
function exchange(port: number, text: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let sentAt = 0;
    socket.on('connect', () => socket.write(text, () => (sentAt = performance.now())));
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received, closedAfterMs: performance.now() - sentAt }));
  });
}

describe('HTTP server timeouts', () => {
  describe('defaults', () => {
    it('cuts a request after 20 s, headers after 10 s, a silent new connection after 10 s, and keeps idle connections 65 s', () => {
      const server = http.createServer();
      const timeouts = loadConfig({}).httpTimeouts;
      expect(timeouts.firstRequestTimeoutMs).to.equal(10_000);
      applyServerTimeouts(server, timeouts);
      expect(server.requestTimeout).to.equal(20_000);
      expect(server.headersTimeout).to.equal(10_000);
      expect(server.keepAliveTimeout).to.equal(65_000);
      expect(server.timeout).to.equal(0);
    });

    it('takes REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS and FIRST_REQUEST_TIMEOUT_MS from the environment', () => {
      const timeouts = loadConfig({ REQUEST_TIMEOUT_MS: '5000', KEEP_ALIVE_TIMEOUT_MS: '620000', FIRST_REQUEST_TIMEOUT_MS: '2500' }).httpTimeouts;
      expect(timeouts).to.deep.equal({ requestTimeoutMs: 5_000, keepAliveTimeoutMs: 620_000, firstRequestTimeoutMs: 2_500 });
      expect(() => loadConfig({ FIRST_REQUEST_TIMEOUT_MS: '0' })).to.throw(/FIRST_REQUEST_TIMEOUT_MS/);
      expect(() => loadConfig({ FIRST_REQUEST_TIMEOUT_MS: 'soon' })).to.throw(/FIRST_REQUEST_TIMEOUT_MS/);
      const server = http.createServer();
      applyServerTimeouts(server, timeouts);
      expect(server.headersTimeout, 'never longer than the whole request').to.equal(5_000);
    });

    it('refuses to apply to a server already listening, where Node no longer reads the check interval', async () => {
      const server = http.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        expect(() => applyServerTimeouts(server, loadConfig({}).httpTimeouts)).to.throw(/before the server listens/);
      } finally {
        server.close();
      }
    });
  });

  describe(`on a listening server (request timeout ${REQUEST_TIMEOUT_MS} ms, keep-alive ${KEEP_ALIVE_TIMEOUT_MS} ms, first request ${FIRST_REQUEST_TIMEOUT_MS} ms)`, () => {
    let server: Server;
    let port: number;

    before(async () => {
      server = http.createServer(testApp());
      applyServerTimeouts(server, {
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
        firstRequestTimeoutMs: FIRST_REQUEST_TIMEOUT_MS,
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('answers 408 and closes the connection when a body announced as 2 MiB stops after 10 bytes', async () => {
      const { key } = await buildTenant();
      const { received, closedAfterMs } = await exchange(
        port,
        [
          'POST /api/v1/contacts HTTP/1.1',
          'Host: localhost',
          `x-api-key: ${key}`,
          'Content-Type: application/json',
          `Content-Length: ${2 * 1024 * 1024}`,
          '',
          '{"email":"',
        ].join('\r\n'),
      );
      expect(received).to.equal('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      expect(closedAfterMs).to.be.within(REQUEST_TIMEOUT_MS - 100, REQUEST_TIMEOUT_MS + CHECK_MS + 500);
    });

    it('answers 408 and closes the connection when the headers never end', async () => {
      const { received, closedAfterMs } = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
      expect(received).to.equal('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      expect(closedAfterMs).to.be.below(REQUEST_TIMEOUT_MS + CHECK_MS + 500);
    });

    it('keeps an idle kept-alive connection open longer than the headers timeout, and closes it after the keep-alive timeout', async () => {
      const socket = net.connect(port, '127.0.0.1');
      const responses: string[] = [];
      let lastResponseAt = 0;
      socket.on('data', (chunk) => {
        responses.push(String(chunk));
        lastResponseAt = performance.now();
      });
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
      await new Promise((resolve) => socket.on('connect', resolve));

      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      // Idle for longer than the headers (and request) timeout, within the keep-alive timeout.
      await sleep(REQUEST_TIMEOUT_MS + 300);
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const closedAt = await closed;

      expect(responses.map((response) => response.split('\r\n')[0])).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      expect(responses[1]).to.match(/\r\nKeep-Alive: timeout=1\r\n/i);
      expect(closedAt - lastResponseAt).to.be.within(
        KEEP_ALIVE_TIMEOUT_MS - 100,
        KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + 500,
      );
    });

    it(`closes connections that send nothing, within ${FIRST_REQUEST_TIMEOUT_MS} ms, without an answer`, async () => {
      const sockets = await Promise.all(Array.from({ length: 50 }, () => silentSocket(port)));
      const outcomes = await Promise.all(sockets.map((socket) => socket.closed));
      for (const { received, closedAfterMs } of outcomes) {
        expect(received).to.equal('');
        expect(closedAfterMs).to.be.within(FIRST_REQUEST_TIMEOUT_MS - 50, FIRST_REQUEST_TIMEOUT_MS + 500);
      }
    });

    it('serves a first request sent within the bound, and then leaves the connection to the keep-alive timeout', async () => {
      const socket = net.connect(port, '127.0.0.1');
      const responses: string[] = [];
      socket.on('data', (chunk) => responses.push(String(chunk)));
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
      await new Promise((resolve) => socket.on('connect', resolve));
      const connectedAt = performance.now();
      await sleep(FIRST_REQUEST_TIMEOUT_MS - 150);
      socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      const closedAt = await closed;
      expect(responses.map((response) => response.split('\r\n')[0])).to.deep.equal(['HTTP/1.1 200 OK']);
      // Open past the first-request bound: closed by the keep-alive timeout, not by it.
      expect(closedAt - connectedAt).to.be.above(FIRST_REQUEST_TIMEOUT_MS - 150 + KEEP_ALIVE_TIMEOUT_MS - 100);
    });
  });
});

// A connection that never sends a byte; `closed` resolves when the server closes it.
async function silentSocket(port: number): Promise<{ closed: Promise<{ received: string; closedAfterMs: number }> }> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const connectedAt = performance.now();
  return { closed: new Promise((resolve) => socket.on('close', () => resolve({ received, closedAfterMs: performance.now() - connectedAt }))) };
}
