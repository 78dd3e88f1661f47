import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createTransport } from 'nodemailer';
import { REPO, serverEnv, startServer } from '../support/server-process';

// The bounce listener in the real processes: `npm start` (dist/server.js) and `npm run worker`
// (dist/worker.js) start it when BOUNCE_SMTP_PORT is set, say where it listens, refuse mail for
// other domains, and stop with the process on SIGTERM.

const ENV = { BOUNCE_DOMAIN: 'bounces.example.net', BOUNCE_SMTP_PORT: '0', SEQUENCE_ENGINE: 'off', WEBHOOK_DISPATCHER: 'off' };

function listenerPort(stderr: string): number | undefined {
  const line = stderr.split('\n').find((text) => text.includes('"msg":"bounce listener"'));
  return line ? (JSON.parse(line) as { port: number }).port : undefined;
}

async function relayRefused(port: number): Promise<number | undefined> {
  const transport = createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, connectionTimeout: 2_000, socketTimeout: 5_000 });
  try {
    await transport.sendMail({ envelope: { from: 'a@elsewhere.example', to: ['b@elsewhere.example'] }, raw: 'Subject: relay\r\n\r\nhi\r\n' });
    return 250;
  } catch (error) {
    return (error as { responseCode?: number }).responseCode;
  } finally {
    transport.close();
  }
}

describe('the bounce listener in the service and the worker', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bounces-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('npm start: prints the envelope sender and the listener, refuses other domains with 550, stops on SIGTERM with 0', async () => {
    const server = await startServer(`sqlite:${path.join(dir, 'server.sqlite')}`, ENV);
    try {
      // Logged once it listens, after the HTTP server's line: on stdout for a person and in the
      // log on stderr; two pipes, so either can arrive first.
      const until = Date.now() + 30_000;
      const announced = () => server.stdout().includes('Bounce listener (SMTP)') && listenerPort(server.stderr()) !== undefined;
      while (!announced() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      const port = listenerPort(server.stderr());
      expect(port, server.stderr()).to.be.a('number');
      expect(server.stdout()).to.include('Envelope sender (Return-Path): bounce+<token>@bounces.example.net');
      expect(server.stdout()).to.include(`Bounce listener (SMTP): 127.0.0.1:${port}, mail for bounces.example.net only`);
      expect(await relayRefused(port!)).to.equal(550);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited, server.stderr()).to.equal(0);
  });

  it('npm start without BOUNCE_DOMAIN says late bounces cannot come back', async () => {
    const server = await startServer(`sqlite:${path.join(dir, 'plain.sqlite')}`, { SEQUENCE_ENGINE: 'off', WEBHOOK_DISPATCHER: 'off' });
    try {
      expect(server.stdout()).to.include('Late bounces and complaints cannot come back: no BOUNCE_DOMAIN');
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).to.equal(0);
  });

  it('npm run worker: starts the listener and stops it on SIGTERM with 0', async () => {
    const url = `sqlite:${path.join(dir, 'worker.sqlite')}`;
    // The service migrates; the worker does not.
    const server = await startServer(url, { SEQUENCE_ENGINE: 'off', WEBHOOK_DISPATCHER: 'off' });
    server.child.kill('SIGTERM');
    await server.exited;
    const worker = spawn(process.execPath, [path.join(REPO, 'dist', 'worker.js')], { cwd: REPO, env: serverEnv(url, ENV), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    worker.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    try {
      const until = Date.now() + 30_000;
      while (listenerPort(stderr) === undefined && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      const port = listenerPort(stderr);
      expect(port, stderr).to.be.a('number');
      expect(await relayRefused(port!)).to.equal(550);
    } finally {
      worker.kill('SIGTERM');
    }
    expect(await exited, stderr).to.equal(0);
  });
});
