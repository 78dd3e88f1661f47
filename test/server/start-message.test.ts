import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../src/cli/run-cli';
import { loadConfig } from '../../src/config';
import { rebindModelsToTestDb } from '../support/db';
import { startServer, type StartedServer } from '../support/server-process';

// Every start of the real server (dist/server.js), not only the first on an empty database,
// says where the service is: the API, the docs and the dashboard, at PUBLIC_BASE_URL when set,
// else at the address it listens on as a browser on the machine reaches it.

async function stop(server: StartedServer) {
  server.child.kill('SIGTERM');
  await server.exited;
}

// The server's stdout once it includes text (printed after the listening line).
function whenPrinted(server: StartedServer, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdout = server.child.stdout!;
    const check = () => {
      if (!server.stdout().includes(text)) return;
      clearTimeout(timer);
      stdout.off('data', check);
      resolve(server.stdout());
    };
    const timer = setTimeout(() => {
      stdout.off('data', check);
      reject(new Error(`"${text}" not printed; stdout: ${server.stdout()}`));
    }, 10_000);
    // After whenListening's own listener, which collects what server.stdout() returns.
    stdout.on('data', check);
    check();
  });
}

const whereServing = (server: StartedServer) => whenPrinted(server, 'Dashboard:');

// Whether a TCP connection to host:port is accepted.
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(5_000, () => socket.destroy());
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    // Refused: an error, then close.
    socket.once('error', () => undefined);
    socket.once('close', () => resolve(false));
  });
}

describe('the start message', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-message-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('names the API, /docs and /dashboard on a later start too, where each answers', async () => {
    const url = `sqlite:${path.join(dir, 'service.sqlite')}`;
    const first = await startServer(url);
    try {
      const out = await whenPrinted(first, 'Admin command line');
      expect(out).to.include('API key:');
      expect(out).to.include('user:setup-link');
      expect(out).to.include(`Dashboard:  http://localhost:${first.port}/dashboard`);
    } finally {
      await stop(first);
    }

    const later = await startServer(url);
    try {
      const out = await whereServing(later);
      expect(out).not.to.include('API key:');
      const base = `http://localhost:${later.port}`;
      expect(out).to.include(`API:        ${base}/api/v1 `);
      expect(out).to.include(`${base}/api/v1/openapi.json`);
      expect(out).to.include(`Docs:       ${base}/docs\n`);
      expect(out).to.include(`Dashboard:  ${base}/dashboard\n`);
      // What it names is there.
      const reach = (route: string) => fetch(`http://127.0.0.1:${later.port}${route}`);
      expect((await reach('/api/v1/openapi.json')).status).to.equal(200);
      expect((await reach('/docs')).status).to.equal(200);
      expect((await reach('/dashboard/')).status).to.equal(200);
    } finally {
      await stop(later);
    }
  });

  it('uses PUBLIC_BASE_URL when set, and HOST when it names one address', async () => {
    const url = `sqlite:${path.join(dir, 'service.sqlite')}`;
    const proxied = await startServer(url, { PUBLIC_BASE_URL: 'https://svc.example.com/' });
    try {
      const out = await whenPrinted(proxied, 'Admin command line');
      expect(out).to.include('API:        https://svc.example.com/api/v1 ');
      expect(out).to.include('Docs:       https://svc.example.com/docs\n');
      expect(out).to.include('Dashboard:  https://svc.example.com/dashboard\n');
      // The demo user's setup link goes the same way.
      expect(out).to.match(/https:\/\/svc\.example\.com\/dashboard\/setup\?token=/);
    } finally {
      await stop(proxied);
    }

    const oneAddress = await startServer(url, { HOST: '127.0.0.2' });
    try {
      const out = await whereServing(oneAddress);
      const base = `http://127.0.0.2:${oneAddress.port}`;
      expect(out).to.include(`Docs:       ${base}/docs\n`);
      expect(out).to.include(`Dashboard:  ${base}/dashboard\n`);
      expect((await fetch(`${base}/docs`)).status).to.equal(200);
    } finally {
      await stop(oneAddress);
    }
  });

  it('says who can reach it: this machine only by default, every interface when HOST opens it', async () => {
    const url = `sqlite:${path.join(dir, 'service.sqlite')}`;
    const byDefault = await startServer(url, { HOST: '' });
    try {
      const out = await whereServing(byDefault);
      expect(out).to.include('Listening on 127.0.0.1 only (HOST): reachable from this machine only; HOST=0.0.0.0 opens it to other machines');
      // Another address of this machine, as another machine of the network would use: refused.
      const outside = Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
      if (outside) expect(await connects(outside.address, byDefault.port)).to.equal(false);
      expect(await connects('127.0.0.1', byDefault.port)).to.equal(true);
      // The embedded database's trial lets webhooks reach a receiver on this machine, and says so.
      expect(out).to.include('Webhooks may call http://');
      // No SMTP_URL: emails are captured, and the start says so.
      expect(await whenPrinted(byDefault, 'Emails are NOT sent')).to.match(/Emails are NOT sent \(no SMTP_URL\): each is written as an \.eml file to .*outbox/);
    } finally {
      await stop(byDefault);
    }
    const everywhere = await startServer(url, { HOST: '0.0.0.0', WEBHOOK_ALLOW_INSECURE: 'false', SMTP_URL: 'smtp://127.0.0.1:2525' });
    try {
      const out = await whereServing(everywhere);
      expect(out).to.include('Listening on every interface (HOST=0.0.0.0): other machines that reach this one reach the service; HOST=127.0.0.1 keeps it to this machine');
      expect(out).not.to.include('Webhooks may call');
      expect(out).not.to.include('Emails are NOT sent');
    } finally {
      await stop(everywhere);
    }
  });

  it('makes the command line\'s setup links at the port the service started on, whatever PORT its own shell has', async () => {
    const url = `sqlite:${path.join(dir, 'service.sqlite')}`;
    const server = await startServer(url);
    let accountId: string;
    try {
      const out = await whenPrinted(server, 'Admin command line');
      accountId = /account:\s+([0-9a-f-]{36})/.exec(out)![1]!;
    } finally {
      await stop(server);
    }
    // `npm run -s cli -- ...` in another shell, without the server's PORT (so its own default, 3000).
    const cli = async (argv: string[]) => {
      let stdout = '';
      const code = await runCli(argv, loadConfig({ DATABASE_URL: url }), { stdout: (t) => void (stdout += t), stderr: () => {} });
      expect(code, argv.join(' ')).to.equal(0);
      return JSON.parse(stdout);
    };
    try {
      const [user] = await cli(['user:list', '--account', accountId]);
      const link = await cli(['user:setup-link', '--id', user.id]);
      expect(link.setupUrl).to.match(new RegExp(`^http://localhost:${server.port}/dashboard/setup\\?token=`));
      expect(server.port).to.not.equal(3000);
    } finally {
      rebindModelsToTestDb();
    }
  });
});
