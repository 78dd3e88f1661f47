import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { compileEntry, nodePath, REPO } from './compile';

// The servers under test, each a child process of the driver (never the driver itself), and
// what /proc says about them.

export interface ServerSpec {
  name: string; // short, for tables: service, bare, baseline
  describe: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface RunningServer {
  spec: ServerSpec;
  pid: number;
  base: string;
  startMs: number; // spawn to the first 200 on /healthz
  stop(): Promise<void>;
}

export interface ServerSettings {
  databaseUrl: string;
  rateLimitPerMinute: number;
  logDir: string;
}

// Production's environment (the Dockerfile's ENV), the database, no webhook dispatcher, and a
// rate limit that the run never reaches, so that the limiter's bookkeeping runs on every request but never throttles.
function serverEnv(settings: ServerSettings): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: settings.databaseUrl,
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: String(settings.rateLimitPerMinute),
    REDIS_URL: '',
    // The webhook dispatcher polls the database in the background (every 250 ms): work no
    // request asks for, which would land in the service's CPU and in the same-work check's
    // general log. Production can run it apart the same way (`npm run worker`); its own
    // figures come from `npm run bench:webhooks`.
    WEBHOOK_DISPATCHER: 'off',
    // Likewise the sequence engine: its runs' and its outbound sends' looks (every second when
    // idle) landed in the same-work check's log and failed it. `npm run bench:engine` measures it.
    SEQUENCE_ENGINE: 'off',
  };
  delete env.NODE_OPTIONS;
  if (process.env.BENCH_LOG_LEVEL) env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL;
  return env;
}

// The service as production runs it: `node dist/server.js`, built first if stale.
export function serviceSpec(settings: ServerSettings): ServerSpec {
  build(REPO);
  return {
    name: 'service',
    describe: `node dist/server.js (${REPO})`,
    command: process.execPath,
    args: [path.join(REPO, 'dist', 'server.js')],
    cwd: REPO,
    env: serverEnv(settings),
  };
}

// Another checkout's service, for before/after in one run: built and run from dist/ when that
// checkout has the build scripts, else from its sources with tsx (which adds tsx's loader and
// source maps to its costs).
export function baselineSpec(dir: string, settings: ServerSettings): ServerSpec {
  const root = path.resolve(dir);
  const built = fs.existsSync(path.join(root, 'scripts', 'build-if-stale.js'));
  if (built) build(root);
  return {
    name: 'baseline',
    describe: built ? `node dist/server.js (${root})` : `node --import tsx src/server.ts (${root})`,
    command: process.execPath,
    args: built ? [path.join(root, 'dist', 'server.js')] : ['--import', 'tsx', path.join(root, 'src', 'server.ts')],
    cwd: root,
    env: serverEnv(settings),
  };
}

// The bare server, compiled to plain JavaScript so that it runs as the service does.
export function bareSpec(settings: ServerSettings, sqlMode: string): ServerSpec {
  const entry = compileEntry('bench/bare-express-server.ts', path.join(settings.logDir, 'bare-build'));
  return {
    name: 'bare',
    describe: `bare Express 5 + mysql2 (${sqlMode === 'query' ? 'text statements' : 'prepared statements'}), bench/bare-express-server.ts`,
    command: process.execPath,
    args: [entry],
    cwd: REPO,
    env: { ...serverEnv(settings), NODE_PATH: nodePath(), BARE_SQL: sqlMode },
  };
}

function build(root: string) {
  const result = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.js')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building ${root} failed`);
}

const live = new Set<ChildProcess>();
let cleanupInstalled = false;

// Children die with the driver: on exit, on Ctrl-C, on SIGTERM.
function installCleanup() {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping the servers\n`);
      for (const child of live) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

export async function startServer(spec: ServerSpec, logDir: string): Promise<RunningServer> {
  installCleanup();
  const port = await freePort();
  const log = fs.openSync(path.join(logDir, `${spec.name}.log`), 'a');
  const started = performance.now();
  const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: { ...spec.env, PORT: String(port) }, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => (live.delete(child), resolve())));
  const base = `http://127.0.0.1:${port}`;
  try {
    await untilHealthy(base, exited, 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${spec.name} did not start (${(error as Error).message}); see ${path.join(logDir, `${spec.name}.log`)}`);
  }
  const startMs = performance.now() - started;
  return {
    spec,
    pid: child.pid!,
    base,
    startMs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function untilHealthy(base: string, exited: Promise<void>, timeoutMs: number): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (gone) throw new Error('it exited');
    if ((await healthStatus(base)) === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no 200 on /healthz within ${timeoutMs} ms`);
}

function healthStatus(base: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(`${base}/healthz`, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', () => resolve(0));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// CPU time the process (all its threads: main, GC, libuv pool) has used, in ms: utime + stime.
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat(5); fields[0] here is field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

// Resident memory now, and its peak, in MiB.
export function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

export function makeLogDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
}
