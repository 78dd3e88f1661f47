import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import type { SendOutcome } from '../../../src/services/webhooks/send-request';
import { REPO } from '../../support/server-process';

// A webhook request's bound holds whatever the garbage collector does, on every Node the service
// starts on. On Node 20, a signal made with AbortSignal.any([stopping, AbortSignal.timeout(ms)])
// never aborts once the timeout signal has been collected: a receiver that never answered held
// its socket for 16 minutes. The requests run in a child process started with --expose-gc
// (test/support/send-under-gc.ts), which allocates and forces full collections all through the
// wait; this process plays the receivers and watches the clock.

const BOUND_MS = 300;
// From the child's first request to its exit: the bound, plus room for a loaded machine.
const DEADLINE_MS = 5_000;
// Before that, tsx has to load in the child (about a second here, more on a busy machine).
const STARTUP_MS = 20_000;
const CHILD = path.join(REPO, 'test', 'support', 'send-under-gc.ts');

interface ChildRun {
  outcomes: SendOutcome[];
  elapsedMs: number;
  // false: still running DEADLINE_MS after it began sending, and killed.
  exitedInTime: boolean;
  stderr: string;
}

function sendFromChild(url: string, timeoutMs: number, requests: number, stopAfterMs?: number): Promise<ChildRun> {
  const args = [CHILD, url, String(timeoutMs), String(requests), ...(stopAfterMs === undefined ? [] : [String(stopAfterMs)])];
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let killed = false;
  const kill = () => {
    killed = true;
    child.kill('SIGKILL');
  };
  let killer = setTimeout(kill, STARTUP_MS);
  child.stdout.on('data', (chunk: Buffer) => {
    if (!stdout.includes('sending\n') && (stdout + chunk.toString()).includes('sending\n')) {
      clearTimeout(killer);
      killer = setTimeout(kill, DEADLINE_MS);
    }
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(killer);
      const line = stdout.split('\n').find((text) => text.startsWith('{'));
      const printed = line ? (JSON.parse(line) as { outcomes: SendOutcome[]; elapsedMs: number }) : { outcomes: [], elapsedMs: Infinity };
      resolve({ ...printed, exitedInTime: !killed, stderr });
    });
  });
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

describe('a webhook request under garbage collection (send-request.ts, in a child with --expose-gc)', function () {
  this.timeout(STARTUP_MS + DEADLINE_MS + 10_000);
  const sockets = new Set<Socket>();
  const responses = new Set<ServerResponse>();
  const servers: Server[] = [];

  function track<T extends Server>(server: T): T {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    servers.push(server);
    return server;
  }

  afterEach(async () => {
    responses.forEach((response) => response.destroy());
    responses.clear();
    sockets.forEach((socket) => socket.destroy());
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  function expectCutAtTheBound(run: ChildRun, requests: number) {
    expect(run.exitedInTime, `the child still waited ${DEADLINE_MS} ms after it began sending; stderr: ${run.stderr}`).to.equal(true);
    expect(run.outcomes).to.have.length(requests);
    for (const outcome of run.outcomes) {
      expect(outcome).to.include({ status: null, error: `timeout after ${BOUND_MS} ms` });
      // Not before the bound (the timer's clock counts whole milliseconds).
      expect(outcome.durationMs).to.be.at.least(BOUND_MS - 1);
    }
    expect(run.elapsedMs).to.be.below(DEADLINE_MS);
  }

  it('ends a request to a receiver that accepts the connection and never answers, at the bound', async () => {
    const received: string[] = [];
    // Takes the bytes, never writes one.
    const url = await listening(track(createNetServer((socket) => socket.on('data', (chunk) => received.push(chunk.toString())))));

    const run = await sendFromChild(url, BOUND_MS, 8);

    expectCutAtTheBound(run, 8);
    expect(received.join('')).to.include('webhook-id: msg_gc');
  });

  it('ends a request whose receiver sends the headers and then stalls the body, at the bound', async () => {
    const server = track(
      createHttpServer((req, res) => {
        responses.add(res);
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"partial":');
      }),
    );
    const url = await listening(server);

    const run = await sendFromChild(url, BOUND_MS, 8);

    // A response cut short does not count: no status, as for a receiver that never answered.
    expectCutAtTheBound(run, 8);
  });

  it('ends a request to a receiver that never answers when the dispatcher stops, long before the bound', async () => {
    const url = await listening(track(createNetServer((socket) => socket.resume())));

    const run = await sendFromChild(url, 60_000, 8, BOUND_MS);

    expect(run.exitedInTime, `the child still waited ${DEADLINE_MS} ms after it began sending; stderr: ${run.stderr}`).to.equal(true);
    expect(run.outcomes).to.have.length(8);
    for (const outcome of run.outcomes) {
      // What the dispatcher and the engine read as "hand it back", not as a failed attempt.
      expect(outcome).to.include({ status: null, error: 'aborted: dispatcher stopping' });
      expect(outcome.durationMs).to.be.at.least(BOUND_MS - 1);
    }
  });

  it('leaves nothing behind once the receiver has answered: the process exits long before the bound', async () => {
    const url = await listening(track(createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()))));

    const run = await sendFromChild(url, 60_000, 8);

    expect(run.exitedInTime, `a timer or socket kept the child alive; stderr: ${run.stderr}`).to.equal(true);
    expect(run.outcomes).to.have.length(8);
    for (const outcome of run.outcomes) expect(outcome).to.include({ status: 204, error: null });
  });
});
