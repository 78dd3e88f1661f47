import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { compareEndpoints, type Endpoint } from './lib/compare-endpoints';
import { readProfile, type ProfileShares } from './lib/cpu-profile';
import { readHeapProfile } from './lib/heap-profile';
import { byLayer } from './lib/layers';
import { REPO } from './lib/compile';
import { openBenchDatabase } from './lib/database';
import { contactIdsByEmail, createBenchAccount, seedContacts } from './lib/fixture';
import { endpointContext, measureEndpoint } from './lib/endpoint-load';
import type { LoadResult } from './lib/load';
import { fixed, table } from './lib/report';
import { bareSpec, makeLogDir, serviceSpec, startServer, type RunningServer, type ServerSpec } from './lib/servers';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// npm run bench:profile: where a request's CPU goes, in the service and in the bare server,
// under the same load as `npm run bench` (one endpoint, BENCH_PROFILE_ENDPOINT, default get).
// Both run with --cpu-prof; the profiles are read when they exit and summed by package. The
// profiler itself costs both some CPU: read the shares, and the ratio of busy time per request.
// BENCH_PROFILE_HEAP=1: instead of CPU, what each request allocates (bench/lib/heap-sampler.cjs),
// in KiB per request of the measured run, by part and by function: the garbage a GC collects.

const ENDPOINT = process.env.BENCH_PROFILE_ENDPOINT ?? 'get';
const SECONDS = numberFrom('BENCH_SECONDS', 10);
const WARMUP_SECONDS = numberFrom('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = numberFrom('BENCH_CONNECTIONS', 10);
const HEAVY_CONNECTIONS = numberFrom('BENCH_HEAVY_CONNECTIONS', 4);
const TOP = numberFrom('BENCH_PROFILE_TOP', 25);
const SEED_CONTACTS = 2000;
const HEAP = process.env.BENCH_PROFILE_HEAP === '1';
const HEAP_SAMPLER = path.join(REPO, 'bench', 'lib', 'heap-sampler.cjs');

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench:profile: ${text}\n`);

async function main() {
  const tag = randomBytes(4).toString('hex');
  const logDir = makeLogDir('bench-profile');
  const database = await openBenchDatabase();
  const settings = { databaseUrl: database.url, rateLimitPerMinute: 1_000_000_000, logDir };
  const profiled = (spec: ServerSpec): ServerSpec => {
    if (HEAP) return { ...spec, args: ['--require', HEAP_SAMPLER, ...spec.args], env: { ...spec.env, HEAP_PROFILE_OUT: heapFile(logDir, spec.name) } };
    const dir = path.join(logDir, `${spec.name}-profile`);
    return { ...spec, args: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...spec.args] };
  };
  const specs = [profiled(serviceSpec(settings)), profiled(bareSpec(settings, 'execute'))];
  const servers: RunningServer[] = [];
  for (const spec of specs) servers.push(await startServer(spec, logDir));
  const [service] = servers;

  const account = await createBenchAccount(database.url, `profile ${tag}`);
  const [sequenceId] = await account.newSequences(1);
  const emails = Array.from({ length: SEED_CONTACTS }, (_, i) => `p${i}-${tag}@bench.test`);
  await seedContacts(service, account.key, SEED_CONTACTS, (i) => emails[i], HEAVY_CONNECTIONS);
  const contactIds = await contactIdsByEmail(database.admin, account.accountId, emails);
  const ctx = endpointContext(account, tag, sequenceId, contactIds, emails);
  const endpoint = compareEndpoints(ctx).find((e) => e.name === ENDPOINT);
  if (!endpoint) throw new Error(`BENCH_PROFILE_ENDPOINT: unknown endpoint ${ENDPOINT}`);

  if (HEAP) {
    await allocations(endpoint, servers, account.key, logDir, database.describe);
  } else {
    await cpu(endpoint, servers, account.key, logDir, database.describe);
  }
  await account.close();
  await database.close();
}

async function cpu(endpoint: Endpoint, servers: RunningServer[], key: string, logDir: string, databaseLine: string) {
  const results = new Map<string, LoadResult>();
  // Requests each server answered while it was profiled (the profile spans its whole life):
  // warm-up and measured run; the seeding batches and start-up are left in, and are small.
  const answered = new Map<string, number>();
  for (const server of servers) {
    const warm = await load(endpoint, server, key, WARMUP_SECONDS);
    const measured = await load(endpoint, server, key, SECONDS);
    results.set(server.spec.name, measured);
    answered.set(server.spec.name, warm.ok + measured.ok);
    progress(`${server.spec.name}: ${Math.round(measured.perSecond)} req/s`);
  }
  for (const server of servers) await server.stop();

  out(`# npm run bench:profile: ${endpoint.label}, the service and the bare server under --cpu-prof`);
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${databaseLine}`);
  out(`Load:     about ${SECONDS} s per server after ${WARMUP_SECONDS} s of warm-up, ${endpoint.heavy ? HEAVY_CONNECTIONS : CONNECTIONS} connections`);
  const shares = new Map<string, ProfileShares>();
  for (const server of servers) {
    const dir = path.join(logDir, `${server.spec.name}-profile`);
    const file = fs.readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile written by ${server.spec.name} in ${dir}`);
    shares.set(server.spec.name, readProfile(path.join(dir, file), codeDirOf(server, logDir)));
  }
  out();
  out(
    table(
      ['server', 'requests', 'CPU ms/req (/proc)', 'profiled busy ms/req'],
      servers.map((server) => {
        const result = results.get(server.spec.name)!;
        const busy = shares.get(server.spec.name)!.busyMs;
        return [server.spec.name, String(result.ok), fixed(result.cpuMsPerRequest, 3), fixed(busy / answered.get(server.spec.name)!, 3)];
      }),
    ),
  );
  const perRequest = (name: string) => shares.get(name)!.busyMs / answered.get(name)!;
  const service = byLayer(shares.get('service')!.byPart, perRequest('service'));
  const bare = byLayer(shares.get('bare')!.byPart, perRequest('bare'));
  const difference = (layer: string) => (service.get(layer) ?? 0) - (bare.get(layer) ?? 0);
  const layers = [...new Set([...service.keys(), ...bare.keys()])].sort((a, b) => difference(b) - difference(a));
  out();
  out('## By layer: profiled busy µs per request (bench/lib/layers.ts)');
  out();
  out(
    table(
      ['layer', 'service', 'bare', 'difference'],
      layers.map((layer) => [layer, fixed(service.get(layer) ?? 0, 0), fixed(bare.get(layer) ?? 0, 0), `${difference(layer) >= 0 ? '+' : ''}${fixed(difference(layer), 0)}`]),
    ),
  );
  for (const server of servers) {
    const profile = shares.get(server.spec.name)!;
    out();
    out(`## ${server.spec.name}: share of busy CPU by part (node's own code charged to its caller)`);
    out();
    out(table(['share', 'part'], profile.byPart.slice(0, TOP).map(([name, share]) => [`${fixed(share * 100, 1)} %`, name])));
    out();
    out(`## ${server.spec.name}: self time by function`);
    out();
    out(table(['share', 'function'], profile.byFunction.slice(0, TOP).map(([name, share]) => [`${fixed(share * 100, 1)} %`, name])));
  }
  out();
  out(`Load average (1 min): ${loadAverage()}. Profiles and logs: ${logDir}`);
}

const heapFile = (logDir: string, name: string) => path.join(logDir, `${name}.heapprofile`);

// The server's own compiled code: the service runs from dist/, the bare server from its build
// in the log directory.
const codeDirOf = (server: RunningServer, logDir: string) =>
  `${server.spec.name === 'bare' ? path.join(logDir, 'bare-build') : path.join(server.spec.cwd, 'dist')}/`;

async function allocations(endpoint: Endpoint, servers: RunningServer[], key: string, logDir: string, databaseLine: string) {
  const rows: string[][] = [];
  const sections: string[] = [];
  for (const server of servers) {
    await load(endpoint, server, key, WARMUP_SECONDS);
    // A new window: start-up, seeding and warm-up are left out.
    process.kill(server.pid, 'SIGWINCH');
    await sleep(300);
    const measured = await load(endpoint, server, key, SECONDS);
    const file = heapFile(logDir, server.spec.name);
    process.kill(server.pid, 'SIGUSR2');
    for (let waited = 0; !fs.existsSync(file) && waited < 30_000; waited += 100) await sleep(100);
    const heap = readHeapProfile(file, codeDirOf(server, logDir));
    const perRequest = (share: number) => fixed((share * heap.total) / measured.ok / 1024, 2);
    progress(`${server.spec.name}: ${measured.ok} requests, ${fixed(heap.total / measured.ok / 1024, 1)} KiB each`);
    rows.push([server.spec.name, String(measured.ok), fixed(heap.total / measured.ok / 1024, 1)]);
    sections.push(
      [
        `## ${server.spec.name}: KiB allocated per request, by part`,
        '',
        table(['KiB', 'part'], heap.byPart.slice(0, TOP).map(([name, share]) => [perRequest(share), name])),
        '',
        `## ${server.spec.name}: KiB allocated per request, by function`,
        '',
        table(['KiB', 'function'], heap.byFunction.slice(0, TOP).map(([name, share]) => [perRequest(share), name])),
      ].join('\n'),
    );
  }
  for (const server of servers) await server.stop();

  out(`# npm run bench:profile (BENCH_PROFILE_HEAP=1): ${endpoint.label}, what a request allocates`);
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${databaseLine}`);
  out(`Load:     about ${SECONDS} s per server after ${WARMUP_SECONDS} s of warm-up, ${endpoint.heavy ? HEAVY_CONNECTIONS : CONNECTIONS} connections; V8's sampling heap profiler, one sample per 16 KiB, collected objects included`);
  out();
  out(table(['server', 'requests', 'KiB allocated per request'], rows));
  for (const section of sections) out(`\n${section}`);
  out();
  out(`Load average (1 min): ${loadAverage()}. Profiles and logs: ${logDir}`);
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function load(endpoint: Endpoint, server: RunningServer, apiKey: string, seconds: number): Promise<LoadResult> {
  const connections = endpoint.heavy ? HEAVY_CONNECTIONS : CONNECTIONS;
  // Endpoints that consume prepared sequences run a number of requests, the others a time.
  if (!endpoint.pooled) {
    await endpoint.prepare?.({ name: server.spec.name, base: server.base }, 0);
    return measureEndpoint(endpoint, server, apiKey, { seconds }, connections);
  }
  const amount = await endpoint.prepare!({ name: server.spec.name, base: server.base }, Math.max(connections * 2, seconds * 8));
  return measureEndpoint(endpoint, server, apiKey, { amount }, connections);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
