import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { demoKey, REPO, serverEnv, sendTestEvent, startServer, type StartedServer } from '../support/server-process';
import { startReceiver } from '../support/webhook-receiver';

// `npm run worker` (dist/worker.js): the background work of a service started with
// WEBHOOK_DISPATCHER=off or SEQUENCE_ENGINE=off, in a process of its own on the same database.
describe('the worker process', function () {
  this.timeout(90_000);
  let dir: string;
  let server: StartedServer | undefined;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-'));
  });
  after(() => {
    if (server) server.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the webhooks a service with WEBHOOK_DISPATCHER=off leaves to it, once each, and stops cleanly on SIGTERM', async () => {
    const receiver = await startReceiver(() => 204);
    // An embedded file shared by the two processes, so that the service seeds a demo key.
    const url = `sqlite:${path.join(dir, 'worker.sqlite')}`;
    const env = { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_DISPATCHER: 'off' };
    try {
      server = await startServer(url, env);
      const { eventId } = await sendTestEvent(server, receiver.url);

      const worker = spawn(process.execPath, [path.join(REPO, 'dist', 'worker.js')], {
        cwd: REPO,
        env: serverEnv(url, env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      worker.stderr!.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      try {
        const until = Date.now() + 20_000;
        while (receiver.received.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        expect(receiver.received.map((r) => r.headers['webhook-id']), stderr).to.deep.equal([eventId]);
      } finally {
        worker.kill('SIGTERM');
      }
      expect(await exited, stderr).to.equal(0);
      const lines = stderr.trim().split('\n').map((line) => JSON.parse(line) as { msg: string });
      expect(lines.map((line) => line.msg)).to.include.members(['worker running', 'stopping', 'stopped']);
      // The service itself sent nothing: the one delivery was the worker's.
      expect(receiver.received).to.have.length(1);
    } finally {
      await receiver.close();
    }
  });

  it('moves the runs a service with SEQUENCE_ENGINE=off leaves to it', async () => {
    const url = `sqlite:${path.join(dir, 'engine.sqlite')}`;
    const env = { SEQUENCE_ENGINE: 'off' };
    const service = await startServer(url, env);
    try {
      const { key, sequenceId } = demoKey(service);
      const base = `http://127.0.0.1:${service.port}/api/v1`;
      const headers = { 'x-api-key': key, 'content-type': 'application/json' };
      const trigger = await fetch(`${base}/sequences/${sequenceId}/trigger`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ contact: { email: 'worker@example.com' } }),
      });
      const { runId } = (await trigger.json()) as { runId: string };
      const runStatus = async () => ((await (await fetch(`${base}/sequences/${sequenceId}/runs/${runId}`, { headers })).json()) as { run: { status: string } }).run.status;
      expect(service.stderr()).not.to.include('sequence engine started');
      expect(await runStatus()).to.equal('pending');

      const worker = spawn(process.execPath, [path.join(REPO, 'dist', 'worker.js')], { cwd: REPO, env: serverEnv(url, env), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      worker.stderr!.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      try {
        let status = 'pending';
        for (const started = Date.now(); status === 'pending' && Date.now() - started < 20_000; await new Promise((r) => setTimeout(r, 50))) {
          status = await runStatus();
        }
        // The demo sequence's first step is a 30 s wait: the worker's engine has begun it.
        expect(status, stderr).to.equal('running');
      } finally {
        worker.kill('SIGTERM');
      }
      expect(await exited, stderr).to.equal(0);
      expect(stderr).to.include('sequence engine started');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });
});
