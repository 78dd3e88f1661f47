import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import path from 'node:path';

// The real server in a child process, as it runs in production: `node dist/server.js`.

export const REPO = path.resolve(__dirname, '..', '..');

let built = false;

// `npm test` builds first; a single test file run by hand gets the build it needs here.
export function ensureBuilt(): void {
  if (built) return;
  const result = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'build-if-stale.js')], { cwd: REPO, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`build failed: ${result.stderr}`);
  built = true;
}

export interface StartedServer {
  child: ChildProcess;
  port: number;
  pid: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function serverEnv(databaseUrl: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', REDIS_URL: '', ...env };
}

export function spawnServer(databaseUrl: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  ensureBuilt();
  return spawn(process.execPath, [path.join(REPO, 'dist', 'server.js')], {
    cwd: REPO,
    env: serverEnv(databaseUrl, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

// Waits for the server's "listening" log line, which names its port and pid.
export function whenListening(child: ChildProcess, timeoutMs = 60_000): Promise<StartedServer> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), timeoutMs);
    const onExit = (code: number | null) => reject(new Error(`server exited with ${code}: ${stderr}`));
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const line = stderr.split('\n').find((text) => text.includes('"msg":"listening"'));
      if (!line) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      const { port, pid } = JSON.parse(line) as { port: number; pid: number };
      // The welcome text follows the listening line; give stdout a moment to arrive.
      setTimeout(() => resolve({ child, port, pid, stdout: () => stdout, stderr: () => stderr, exited }), 200);
    });
    child.once('exit', onExit);
  });
}

export function startServer(databaseUrl: string, env: NodeJS.ProcessEnv = {}): Promise<StartedServer> {
  return whenListening(spawnServer(databaseUrl, env));
}

export function demoKey(server: StartedServer): { key: string; sequenceId: string } {
  const key = /API key:\s+(svc_[0-9a-f]{40})/.exec(server.stdout())?.[1];
  const sequenceId = /sequence:\s+([0-9a-f-]{36}) \(active\)/.exec(server.stdout())?.[1];
  if (!key || !sequenceId) throw new Error(`no demo key in the server's output: ${server.stdout()}`);
  return { key, sequenceId };
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export type { SpawnOptions };

// Through the server's REST API, with the demo key of its first start: a webhook endpoint to
// `receiverUrl`, and a webhook.test event for it. Answers the event's id.
export async function sendTestEvent(server: StartedServer, receiverUrl: string): Promise<{ eventId: string }> {
  const { key } = demoKey(server);
  const base = `http://127.0.0.1:${server.port}/api/v1`;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const created = await fetch(`${base}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiverUrl }) });
  if (created.status !== 201) throw new Error(`creating the webhook answered ${created.status}: ${await created.text()}`);
  const { webhook } = (await created.json()) as { webhook: { id: string } };
  const test = await fetch(`${base}/webhooks/${webhook.id}/test`, { method: 'POST', headers, body: '{}' });
  if (test.status !== 202) throw new Error(`the test event answered ${test.status}: ${await test.text()}`);
  return (await test.json()) as { eventId: string };
}
