import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

// Servers a test may freeze (SIGSTOP), resume and stop: never the shared ones other people use.

export interface ThrowawayServer {
  url: string;
  freeze(): void;
  resume(): void;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// Why a throwaway server cannot be had here, or undefined when it can.
export function redisMissing(): string | undefined {
  return spawnSync('redis-server', ['--version']).error ? 'no redis-server binary (scripts/ci/start-redis.sh installs it)' : undefined;
}

export function mariadbMissing(): string | undefined {
  const missing = ['mariadbd', 'mariadb-install-db', 'mariadb-admin', 'mariadb'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool} || test -x /usr/sbin/${tool}`]).status !== 0,
  );
  if (missing.length > 0) return `no ${missing.join(', ')} (scripts/ci/start-mariadb.sh installs Debian's mariadb-server)`;
  if (process.getuid?.() !== 0) return 'scripts/ci/start-mariadb.sh must run as root';
  return undefined;
}

function signaller(pid: number) {
  return {
    freeze: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT'),
  };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

export async function startRedis(): Promise<ThrowawayServer> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let attempt = 0; ; attempt += 1) {
    const pong = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8' }).stdout;
    if (pong?.trim() === 'PONG') break;
    if (attempt >= 100 || child.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    ...signaller(child.pid!),
    async stop() {
      process.kill(child.pid!, 'SIGCONT');
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

// scripts/ci/start-mariadb.sh in a directory of its own, on a port of its own (about 3 s).
export async function startMariadb(): Promise<ThrowawayServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'freeze-mariadb-'));
  const port = await freePort();
  const script = path.resolve(__dirname, '..', '..', 'scripts', 'ci', 'start-mariadb.sh');
  const pidFile = path.join(dir, 'mariadbd.pid');
  const stop = async () => {
    const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').trim()) : 0;
    if (pid > 0) {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const { stdout } = await promisify(execFile)('bash', [script], {
      env: { ...process.env, MARIADB_DIR: dir, MARIADB_PORT: String(port) },
      timeout: 90_000,
    });
    const url = stdout.trim().split('\n').at(-1)!;
    return { url, ...signaller(Number(fs.readFileSync(pidFile, 'utf8').trim())), stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
