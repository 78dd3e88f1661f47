import { randomBytes } from 'node:crypto';
import { compareEndpoints, DEFAULT_ENDPOINTS, type Endpoint } from './lib/compare-endpoints';
import { openBenchDatabase } from './lib/database';
import { contactIdsByEmail, createBenchAccount, seedContacts } from './lib/fixture';
import { GeneralLog } from './lib/general-log';
import { endpointContext, measureEndpoint } from './lib/endpoint-load';
import type { LoadResult } from './lib/load';
import { fixed, median, medianCells, spread, table } from './lib/report';
import { checkSameWork, endpointProbe, errorProbes, type ProbeOutcome } from './lib/same-work';
import {
  bareSpec,
  baselineSpec,
  cpuMs,
  makeLogDir,
  memoryMiB,
  serviceSpec,
  startServer,
  type RunningServer,
  type ServerSpec,
} from './lib/servers';
import { listFrom, loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench`: the service against a bare Express + mysql2 server doing the same work
// (bench/bare-express-server.ts), optionally with a baseline checkout's service too, over one
// database, in interleaved rounds. How to read the output: bench/README.md.
// BENCH_ENGINE_COMPARE=1: the same build twice instead, SEQUENCE_ENGINE=on against off (an idle
// engine: the sequences here have no steps, so nothing is ever due), and the idle engine's CPU.

const ROUNDS = numberFrom('BENCH_ROUNDS', 3);
const SECONDS = numberFrom('BENCH_SECONDS', 10);
const WARMUP_SECONDS = numberFrom('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = numberFrom('BENCH_CONNECTIONS', 10);
const HEAVY_CONNECTIONS = numberFrom('BENCH_HEAVY_CONNECTIONS', 4);
const COLD_STARTS = numberFrom('BENCH_COLD_STARTS', 5);
const RATE_LIMIT = numberFrom('BENCH_RATE_LIMIT', 1_000_000_000);
const SEED_CONTACTS = 2000;
const BARE_SQL = process.env.BENCH_BARE_SQL === 'query' ? 'query' : 'execute';
const SELECTED = listFrom('BENCH_ENDPOINTS', DEFAULT_ENDPOINTS);
const ENGINE_COMPARE = process.env.BENCH_ENGINE_COMPARE === '1';
const IDLE_SECONDS = numberFrom('BENCH_IDLE_SECONDS', 30);
// The issue's bounds: no endpoint's CPU per request moves by more than 3 % with the engine on;
// an idle engine costs under 1 % of a core.
const ENGINE_CPU_RATIO_MAX = 1.03;
const IDLE_CPU_PERCENT_MAX = 1;

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);

async function main() {
  const startedLoad = loadAverage();
  const tag = randomBytes(4).toString('hex');
  const logDir = makeLogDir('bench');
  const database = await openBenchDatabase();
  const settings = { databaseUrl: database.url, rateLimitPerMinute: RATE_LIMIT, logDir };
  const specs: ServerSpec[] = ENGINE_COMPARE
    ? [withEngine(serviceSpec(settings), 'on'), withEngine(serviceSpec(settings), 'off')]
    : [serviceSpec(settings), bareSpec(settings, BARE_SQL)];
  if (process.env.BENCH_BASELINE_DIR && !ENGINE_COMPARE) specs.push(baselineSpec(process.env.BENCH_BASELINE_DIR, settings));

  // The service first: it brings the schema up to date.
  const servers: RunningServer[] = [];
  for (const spec of specs) servers.push(await startServer(spec, logDir));
  const [service] = servers;
  progress(`servers up (logs in ${logDir}): ${servers.map((s) => `${s.spec.name} pid ${s.pid}`).join(', ')}`);

  const account = await createBenchAccount(database.url, `bench ${tag}`);
  const [sequenceId] = await account.newSequences(1);
  const [draftSequenceId] = await account.newSequences(1, 'draft');
  const emails = Array.from({ length: SEED_CONTACTS }, (_, i) => `s${i}-${tag}@bench.test`);
  const seeded = await seedContacts(service, account.key, SEED_CONTACTS, (i) => emails[i], HEAVY_CONNECTIONS);
  progress(`seeded ${seeded.contacts} contacts through POST /contacts/batch (${Math.round(seeded.perSecond)} contacts/s)`);
  const contactIds = await contactIdsByEmail(database.admin, account.accountId, emails);

  const ctx = endpointContext(account, tag, sequenceId, contactIds, emails);
  const endpoints = compareEndpoints(ctx).filter((e) => SELECTED.includes(e.name));
  const unknown = SELECTED.filter((name) => !endpoints.some((e) => e.name === name));
  if (unknown.length > 0) throw new Error(`BENCH_ENDPOINTS: unknown ${unknown.join(', ')}`);

  out(ENGINE_COMPARE ? '# npm run bench (BENCH_ENGINE_COMPARE=1): the service with its sequence engine on, against the same build with it off' : `# npm run bench: the service against a bare server doing the same work`);
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${database.describe}`);
  for (const server of servers) out(`${server.spec.name.padEnd(9)} ${server.spec.describe}`);
  out(
    `Load:     autocannon in the driver's process; ${ROUNDS} round(s) of about ${SECONDS} s per endpoint and server, ` +
      `${CONNECTIONS} connections (${HEAVY_CONNECTIONS} for batch, enroll, unenroll); rate limit ${RATE_LIMIT}/min on every server`,
  );

  const checkWanted = process.env.BENCH_CHECK ?? (database.own ? '1' : '0');
  if (ENGINE_COMPARE) {
    out();
    out('Same work: not checked (both servers are the same build; the idle engine\'s own statements would show in the general log as a difference).');
  } else if (checkWanted === '1') {
    progress('checking with the general log that the servers do the same work');
    const probes = [
      ...endpoints.map(endpointProbe),
      ...errorProbes({ contactId: contactIds[0], email: emails[0], sequenceId, draftSequenceId }),
    ];
    reportSameWork(await checkSameWork(servers, probes, new GeneralLog(database.admin, database.own), account.key), servers);
  } else {
    out();
    out('Same work: not checked (BENCH_CHECK=1 turns on the general-log check; it needs the right to SET GLOBAL general_log).');
  }

  const rates = new Map<string, number>();
  const rateKey = (server: RunningServer, endpoint: Endpoint) => `${server.spec.name}/${endpoint.name}`;
  const connectionsFor = (endpoint: Endpoint) => (endpoint.heavy ? HEAVY_CONNECTIONS : CONNECTIONS);

  // Warm-up: JIT, pools and caches, and a first rate, from which each measured run is sized to
  // last about BENCH_SECONDS.
  for (const server of ROUNDS > 0 ? servers : []) {
    for (const endpoint of endpoints) {
      const connections = connectionsFor(endpoint);
      const amount = endpoint.pooled ? await prepare(endpoint, server, connections * 2) : undefined;
      if (!endpoint.pooled) await endpoint.prepare?.({ name: server.spec.name, base: server.base }, 0);
      const result = await measure(endpoint, server, account.key, amount ? { amount } : { seconds: WARMUP_SECONDS });
      rates.set(rateKey(server, endpoint), result.perSecond);
    }
    progress(`warmed up ${server.spec.name}`);
  }

  const results = new Map<string, LoadResult[]>(); // per server/endpoint, one per round
  for (let round = 0; round < ROUNDS; round += 1) {
    // Who goes first alternates, so that neither always follows the other.
    const order = servers.map((_, i) => servers[(i + round) % servers.length]);
    for (const endpoint of endpoints) {
      const line: string[] = [];
      for (const server of order) {
        const connections = connectionsFor(endpoint);
        const wanted = Math.max(connections * 2, Math.round((rates.get(rateKey(server, endpoint)) ?? 1) * SECONDS));
        const amount = await prepare(endpoint, server, wanted);
        const result = await measure(endpoint, server, account.key, { amount });
        rates.set(rateKey(server, endpoint), result.perSecond);
        const key = rateKey(server, endpoint);
        results.set(key, [...(results.get(key) ?? []), result]);
        line.push(`${server.spec.name} ${Math.round(result.perSecond)}/s ${fixed(result.cpuMsPerRequest, 2)} ms CPU`);
        if (result.wrong > 0) progress(`  ${endpoint.name} on ${server.spec.name}: ${result.wrong} wrong answers`);
      }
      progress(`round ${round + 1}/${ROUNDS} ${endpoint.name.padEnd(8)} ${line.join('   ')}`);
    }
  }

  const memory = servers.map((server) => ({ server, ...memoryMiB(server.pid) }));
  for (const server of servers) await server.stop();
  const idle = ENGINE_COMPARE ? await idleCpu(specs, logDir) : [];

  const coldStarts = new Map<string, number[]>();
  for (let i = 0; i < COLD_STARTS; i += 1) {
    for (const spec of specs) {
      const started = await startServer(spec, logDir);
      coldStarts.set(spec.name, [...(coldStarts.get(spec.name) ?? []), started.startMs]);
      await started.stop();
    }
  }

  if (ROUNDS > 0) reportResults(endpoints, servers, results);
  if (ENGINE_COMPARE) reportIdle(idle);
  out();
  out('## Memory and start-up');
  out();
  const columns = [
    'server',
    ROUNDS > 0 ? 'RSS after load (MiB)' : 'RSS, no load (MiB)',
    'peak RSS (MiB)',
    `cold start to first 200 on /healthz (ms, median of ${COLD_STARTS})`,
  ];
  out(
    table(
      columns,
      memory.map(({ server, rss, peak }) => [
        server.spec.name,
        fixed(rss, 0),
        fixed(peak, 0),
        spread(coldStarts.get(server.spec.name) ?? [], 0),
      ]),
    ),
  );
  out();
  out(`Load average (1 min): ${startedLoad} at the start, ${loadAverage()} at the end. Server logs: ${logDir}`);
  if (ROUNDS > 0 && ROUNDS < 3) out(`Only ${ROUNDS} round(s): the spreads say little; the issue asks for at least 3 (BENCH_ROUNDS).`);

  await account.close();
  await database.close();
}

function prepare(endpoint: Endpoint, server: RunningServer, amount: number): Promise<number> {
  return endpoint.prepare ? endpoint.prepare({ name: server.spec.name, base: server.base }, amount) : Promise.resolve(amount);
}

function measure(endpoint: Endpoint, server: RunningServer, apiKey: string, size: { amount?: number; seconds?: number }) {
  return measureEndpoint(endpoint, server, apiKey, size, endpoint.heavy ? HEAVY_CONNECTIONS : CONNECTIONS);
}

function reportSameWork(outcomes: ProbeOutcome[], servers: readonly RunningServer[]) {
  const names = servers.map((s) => s.spec.name);
  out();
  out('## Same work: statements per request (general log) and responses');
  out();
  out(
    table(
      ['request', ...names.map((n) => `${n} statements`), 'same statements', 'same response'],
      outcomes.map((o) => [
        o.name,
        ...names.map((n) => String(o.byServer.get(n)?.statements.length ?? '-')),
        o.sameStatements ? 'yes' : 'NO',
        o.sameResponse ? 'yes' : 'NO',
      ]),
    ),
  );
  const show = process.env.BENCH_SHOW_STATEMENTS === '1';
  for (const outcome of outcomes) {
    if (outcome.sameStatements && outcome.sameResponse && !show) continue;
    out();
    out(`### ${outcome.name}`);
    for (const [name, { statements, response }] of outcome.byServer) {
      out(`${name}:`);
      for (const statement of statements) out(`  ${statement.length > 220 ? `${statement.slice(0, 217)}...` : statement}`);
      if (!outcome.sameResponse) out(`  -> ${response.replace(/\n/g, '\n     ')}`);
    }
  }
  if (outcomes.some((o) => !o.sameStatements || !o.sameResponse)) {
    process.exitCode = 1;
    out();
    out('THE SERVERS DO NOT DO THE SAME WORK on the requests marked NO: the ratios below compare different things.');
  }
}

function reportResults(endpoints: readonly Endpoint[], servers: readonly RunningServer[], results: Map<string, LoadResult[]>) {
  const of = (server: RunningServer, endpoint: Endpoint) => results.get(`${server.spec.name}/${endpoint.name}`) ?? [];
  out();
  out(`## Each server (median of ${ROUNDS} round(s))`);
  out();
  const rows: string[][] = [];
  for (const endpoint of endpoints) {
    for (const server of servers) {
      const runs = of(server, endpoint);
      rows.push([
        endpoint.name,
        server.spec.name,
        ...medianCells(runs),
      ]);
    }
  }
  out(table(['endpoint', 'server', 'req/s', 'CPU ms/req', 'p50 ms', 'p99 ms', 'requests', 'wrong'], rows));

  const [service, bare, baseline] = servers;
  if (ENGINE_COMPARE) {
    engineTable(service, bare);
    return;
  }
  ratioTable(`service ÷ bare`, service, bare);
  if (baseline) {
    ratioTable(`baseline ÷ bare`, baseline, bare);
    ratioTable(`service ÷ baseline (after ÷ before)`, service, baseline);
  }

  // Engine on ÷ off: CPU per request of each endpoint against the issue's 3 % bound.
  function engineTable(on: RunningServer, off: RunningServer) {
    out();
    out(`## engine on ÷ engine off: median of the per-round ratios (min–max), target CPU per request <= ${ENGINE_CPU_RATIO_MAX}`);
    out();
    const ratios = (endpoint: Endpoint, pick: (r: LoadResult) => number) => of(on, endpoint).map((run, i) => pick(run) / pick(of(off, endpoint)[i]));
    out(
      table(
        ['endpoint', 'CPU per request', 'req/s', 'p50 latency', 'p99 latency', 'verdict'],
        endpoints.map((endpoint) => {
          const cpu = ratios(endpoint, (r) => r.cpuMsPerRequest);
          return [
            endpoint.name,
            spread(cpu),
            spread(ratios(endpoint, (r) => r.perSecond)),
            spread(ratios(endpoint, (r) => r.p50)),
            spread(ratios(endpoint, (r) => r.p99)),
            median(cpu) <= ENGINE_CPU_RATIO_MAX ? 'PASS' : 'FAIL',
          ];
        }),
      ),
    );
  }

  function ratioTable(title: string, a: RunningServer, b: RunningServer) {
    out();
    out(`## ${title}: median of the per-round ratios (min–max)`);
    out();
    const ratios = (endpoint: Endpoint, pick: (r: LoadResult) => number) => {
      const left = of(a, endpoint);
      const right = of(b, endpoint);
      return left.map((run, i) => pick(run) / pick(right[i]));
    };
    out(
      table(
        ['endpoint', 'label', 'req/s', 'CPU per request', 'p50 latency', 'p99 latency'],
        endpoints.map((endpoint) => [
          endpoint.name,
          endpoint.label,
          spread(ratios(endpoint, (r) => r.perSecond)),
          spread(ratios(endpoint, (r) => r.cpuMsPerRequest)),
          spread(ratios(endpoint, (r) => r.p50)),
          spread(ratios(endpoint, (r) => r.p99)),
        ]),
      ),
    );
  }
}

function withEngine(spec: ServerSpec, engine: 'on' | 'off'): ServerSpec {
  return { ...spec, name: `engine-${engine}`, describe: `${spec.describe}, SEQUENCE_ENGINE=${engine}`, env: { ...spec.env, SEQUENCE_ENGINE: engine } };
}

interface IdleCpu {
  name: string;
  cpuMs: number;
  seconds: number;
}

// Each server started afresh and left alone, side by side over the same IDLE_SECONDS (after 5 s
// to settle from start-up): the CPU it spends with no request and nothing due.
async function idleCpu(specs: readonly ServerSpec[], logDir: string): Promise<IdleCpu[]> {
  progress(`idle CPU: ${specs.map((spec) => spec.name).join(' and ')} for ${IDLE_SECONDS} s each, side by side`);
  const servers: RunningServer[] = [];
  for (const spec of specs) servers.push(await startServer(spec, logDir));
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const before = servers.map((server) => cpuMs(server.pid));
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const seconds = (performance.now() - started) / 1000;
  const used = servers.map((server, i) => ({ name: server.spec.name, cpuMs: cpuMs(server.pid) - before[i], seconds }));
  for (const server of servers) await server.stop();
  return used;
}

function reportIdle(idle: readonly IdleCpu[]) {
  out();
  out(`## Idle: CPU with no request and nothing due, over ${fixed(idle[0]?.seconds ?? IDLE_SECONDS, 0)} s (as % of one core)`);
  out();
  out(
    table(
      ['server', 'CPU ms', '% of a core', 'target', 'verdict'],
      idle.map(({ name, cpuMs: used, seconds }) => {
        const percent = (used / (seconds * 1000)) * 100;
        const engineOn = name === 'engine-on';
        return [name, fixed(used, 0), fixed(percent, 2), engineOn ? `< ${IDLE_CPU_PERCENT_MAX}` : '-', engineOn ? (percent < IDLE_CPU_PERCENT_MAX ? 'PASS' : 'FAIL') : '-'];
      }),
    ),
  );
  out();
  out('CPU is utime + stime from /proc of the whole process (the engine shares it with the server\'s own timers); the CPU clock ticks every 10 ms, so a figure under 1 % over 30 s is a count of a few dozen ticks.');
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
