import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { ensureBuilt, REPO, serverEnv, spawnServer, startServer, type StartedServer } from '../support/server-process';

// Sending for real needs an https:// PUBLIC_BASE_URL (docs/channels.md "Verified sending domains
// and the DNS records"): every email carries an unsubscribe link to it. The start refuses a relay
// that is not on this machine without one, and says why; captured emails and a relay on loopback
// (Mailpit) start with a printed warning.

async function stop(server: StartedServer) {
  server.child.kill('SIGTERM');
  await server.exited;
}

describe('the start and PUBLIC_BASE_URL', function () {
  this.timeout(120_000);
  let dir: string;
  let url: string;

  before(function () {
    this.timeout(600_000);
    ensureBuilt();
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sending-start-'));
    url = `sqlite:${path.join(dir, 'service.sqlite')}`;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses to start with a relay that is not on this machine and no PUBLIC_BASE_URL, saying why, before listening', async () => {
    const child = spawnServer(url, { SMTP_URL: 'smtp://news:pw@smtp.shop.example:587', PUBLIC_BASE_URL: '' });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include("Refusing to start: SMTP_URL's relay smtp.shop.example:587 is not on this machine");
    expect(stderr).to.include('PUBLIC_BASE_URL is not set');
    expect(stderr).to.include('Set PUBLIC_BASE_URL');
    expect(stderr).not.to.include('"msg":"listening"');
    expect(stderr, 'the relay password').not.to.include(':pw@');
    expect(stderr, 'no stack trace').not.to.match(/\n\s+at /);
  });

  it('refuses the same in `npm run worker`, which sends too', async () => {
    const worker = spawn(process.execPath, [path.join(REPO, 'dist', 'worker.js')], {
      cwd: REPO,
      env: serverEnv(url, { SMTP_URL: 'smtp://smtp.shop.example:587', PUBLIC_BASE_URL: '' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    worker.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => worker.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include("Refusing to start: SMTP_URL's relay smtp.shop.example:587 is not on this machine");
    expect(stderr).not.to.include('worker running');
  });

  it('refuses an http:// PUBLIC_BASE_URL as well', async () => {
    const child = spawnServer(url, { SMTP_URL: 'smtps://smtp.shop.example:465', PUBLIC_BASE_URL: 'http://svc.example.com' });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    expect(stderr).to.include('PUBLIC_BASE_URL is not an https:// URL (http://svc.example.com)');
  });

  it('starts with a relay on loopback (Mailpit) and says where unsubscribe links point', async () => {
    const server = await startServer(url, { SMTP_URL: 'smtp://127.0.0.1:1025', PUBLIC_BASE_URL: '' });
    try {
      await waitFor(() => server.stdout().includes('Unsubscribe links point at'));
      expect(server.stdout()).to.match(/Unsubscribe links point at http:\/\/localhost:\d+ \(PUBLIC_BASE_URL is not an https:\/\/ URL\)/);
      expect(server.stdout()).to.include('fine for the relay on this machine (127.0.0.1:1025)');
    } finally {
      await stop(server);
    }
  });

  it("starts with docker-compose.yml's Mailpit, reached by name, when SMTP_URL_CAPTURES says it keeps what it receives", async () => {
    const server = await startServer(url, { SMTP_URL: 'smtp://mailpit:1025', SMTP_URL_CAPTURES: 'true', PUBLIC_BASE_URL: '', SEQUENCE_ENGINE: 'off' });
    try {
      await waitFor(() => server.stdout().includes('Unsubscribe links point at'));
      expect(server.stdout()).to.include('fine for the catching relay mailpit:1025 (SMTP_URL_CAPTURES)');
    } finally {
      await stop(server);
    }
  });

  it('starts capturing emails (no SMTP_URL) with the same warning', async () => {
    const server = await startServer(url, { SMTP_URL: '', PUBLIC_BASE_URL: '' });
    try {
      await waitFor(() => server.stdout().includes('Unsubscribe links point at'));
      expect(server.stdout()).to.include('fine for captured emails');
    } finally {
      await stop(server);
    }
  });

  it('starts with a relay elsewhere once PUBLIC_BASE_URL is https, without the warning', async () => {
    const server = await startServer(url, { SMTP_URL: 'smtp://smtp.shop.example:587', PUBLIC_BASE_URL: 'https://svc.example.com', SEQUENCE_ENGINE: 'off' });
    try {
      await waitFor(() => server.stdout().includes('Serving at'));
      expect(server.stdout()).to.include('Serving at https://svc.example.com');
      expect(server.stdout()).not.to.include('Unsubscribe links point at');
    } finally {
      await stop(server);
    }
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('not printed in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
