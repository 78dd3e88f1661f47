import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { ensureBuilt, REPO, serverEnv, whenListening, type StartedServer } from '../support/server-process';

// Connections that never send a byte each hold a file descriptor. The real server, in a child
// process whose descriptor limit is lowered to 256, is sent 5 waves of 120 such connections
// (600 in all, well past the limit): each wave is closed by the server within the bound, and
// afterwards a normal request is answered. The bound is 300 ms here (10 s in production).

const LIMIT = 256;
const FIRST_REQUEST_TIMEOUT_MS = 300;
const WAVES = 5;
const PER_WAVE = 120;

interface Outcome {
  received: string;
  closedAfterMs: number;
}

function silentConnection(port: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let connectedAt = 0;
    socket.on('connect', () => (connectedAt = performance.now()));
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received, closedAfterMs: performance.now() - connectedAt }));
  });
}

describe(`silent connections with the descriptor limit lowered to ${LIMIT} (a child process)`, function () {
  this.timeout(90_000);
  let dir: string;
  let server: StartedServer | undefined;

  before(async function () {
    // A stale dist/ is rebuilt first, which takes a minute or two on a busy machine.
    this.timeout(240_000);
    ensureBuilt();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'descriptor-limit-'));
    const env = serverEnv(`sqlite:${path.join(dir, 'limit.sqlite')}`, { FIRST_REQUEST_TIMEOUT_MS: String(FIRST_REQUEST_TIMEOUT_MS) });
    const child = spawn('bash', ['-c', `ulimit -n ${LIMIT} && exec "$0" dist/server.js`, process.execPath], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = await whenListening(child);
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`closes ${WAVES * PER_WAVE} of them, ${PER_WAVE} at a time, within the bound, and still answers a request`, async () => {
    const limits = fs.readFileSync(`/proc/${server!.pid}/limits`, 'utf8');
    expect(limits).to.match(new RegExp(`^Max open files\\s+${LIMIT}\\s+${LIMIT}\\s`, 'm'));

    for (let wave = 0; wave < WAVES; wave += 1) {
      const outcomes = await Promise.all(Array.from({ length: PER_WAVE }, () => silentConnection(server!.port)));
      expect(outcomes.filter((outcome) => outcome.received !== ''), `wave ${wave}: answered`).to.deep.equal([]);
      const slowest = Math.max(...outcomes.map((outcome) => outcome.closedAfterMs));
      expect(slowest, `wave ${wave}: slowest close (ms)`).to.be.within(FIRST_REQUEST_TIMEOUT_MS - 50, FIRST_REQUEST_TIMEOUT_MS + 1_000);
    }

    const res = await fetch(`http://127.0.0.1:${server!.port}/healthz`);
    expect(res.status).to.equal(200);
    expect(server!.child.exitCode).to.equal(null);
    expect(server!.stderr()).not.to.match(/EMFILE/);
  });
});
