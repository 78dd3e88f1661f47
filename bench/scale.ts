import { randomBytes } from 'node:crypto';
import { openBenchDatabase, waitForQuietInnodb, type BenchDatabase } from './lib/database';
import { explainAll, type ExplainedStatement } from './lib/explain';
import { contactIdsByEmail, createBenchAccount, seedContacts, type BenchAccount, type SeedResult } from './lib/fixture';
import { GeneralLog } from './lib/general-log';
import { runLoad, type LoadResult, type NextRequest } from './lib/load';
import { fixed, table } from './lib/report';
import { makeLogDir, serviceSpec, startServer, type RunningServer, type ServerSpec } from './lib/servers';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench:scale`: no slope with size. One account is seeded through the bulk path
// (POST /contacts/batch) to BENCH_SCALE_SMALL contacts, then to BENCH_SCALE_CONTACTS; at each
// size the same requests are timed, against contacts spread over the whole account, and the
// statements they send are EXPLAINed. How to read it: bench/README.md.

const LARGE = numberFrom('BENCH_SCALE_CONTACTS', 1_000_000);
const SMALL = Math.min(numberFrom('BENCH_SCALE_SMALL', 10_000), LARGE);
const SECONDS = numberFrom('BENCH_SECONDS', 10);
const WARMUP_SECONDS = numberFrom('BENCH_WARMUP_SECONDS', 2);
const CONNECTIONS = numberFrom('BENCH_SCALE_CONNECTIONS', 1);
const SEED_CONNECTIONS = numberFrom('BENCH_SEED_CONNECTIONS', 8);
const BUFFER_POOL_MB = numberFrom('BENCH_SCALE_BUFFER_POOL_MB', 2048);
const RATE_LIMIT = numberFrom('BENCH_RATE_LIMIT', 1_000_000_000);
const SAMPLE = 20_000;
const ENDPOINTS = ['get', 'by-email', 'upsert', 'batch', 'enroll', 'status'] as const;
type EndpointName = (typeof ENDPOINTS)[number];

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench:scale: ${text}\n`);

type Requests = Record<EndpointName, { method: 'GET' | 'POST'; expect: number; next: () => NextRequest }>;

interface Phase {
  size: number;
  results: Map<EndpointName, LoadResult>;
  requests: Requests;
  // Sent only for the EXPLAIN: the other request-path statements (trigger, unenroll).
  explainOnly: Array<{ method: 'POST'; expect: number; next: () => NextRequest }>;
  freshSequences: string[];
  tables: string;
}

async function main() {
  const startedLoad = loadAverage();
  const tag = randomBytes(4).toString('hex');
  const logDir = makeLogDir('bench-scale');
  const database = await openBenchDatabase();
  const bufferPool = await sizeBufferPool(database);
  const spec = serviceSpec({ databaseUrl: database.url, rateLimitPerMinute: RATE_LIMIT, logDir });
  const service = await startServer(spec, logDir);
  const account = await createBenchAccount(database.url, `scale ${tag}`);
  const email = (index: number) => `s${index}-${tag}@scale.test`;
  const logWanted = (process.env.BENCH_CHECK ?? (database.own ? '1' : '0')) === '1';
  const log = logWanted ? new GeneralLog(database.admin, database.own) : undefined;

  const seeds: Array<SeedResult & { from: number }> = [];
  const phases: Phase[] = [];
  const settles: string[] = [];
  let seeded = 0;
  for (const size of SMALL === LARGE ? [LARGE] : [SMALL, LARGE]) {
    progress(`seeding contacts ${seeded}..${size} through POST /contacts/batch, ${SEED_CONNECTIONS} connections`);
    const from = seeded;
    const seed = await seedContacts(service, account.key, size - from, (i) => email(from + i), SEED_CONNECTIONS);
    seeds.push({ ...seed, from });
    seeded = size;
    progress(`seeded ${seed.contacts} in ${seed.seconds.toFixed(1)} s (${Math.round(seed.perSecond)} contacts/s)`);
    const settled = await waitForQuietInnodb(database.admin);
    progress(`InnoDB ${settled.quiet ? 'quiet' : 'still busy'} after ${settled.seconds.toFixed(0)} s`);
    settles.push(`${size}: ${settled.quiet ? 'quiet' : 'still busy (bound reached)'} after ${settled.seconds.toFixed(0)} s`);
    phases.push(await measurePhase(database, service, account, size, email, log));
  }
  await service.stop();
  const explained = log ? await explainAll(database.admin, await captureStatements(phases.at(-1)!, account, log, spec, logDir)) : [];

  report({ database, service, bufferPool, seeds, settles, phases, explained, logged: Boolean(log), startedLoad });
  await account.close();
  await database.close();
}

// A buffer pool that holds the working set of a million contacts: what a production database
// for that many would have. Only on the benchmark's own MariaDB.
async function sizeBufferPool(database: BenchDatabase): Promise<string> {
  if (database.own) await database.admin.query(`SET GLOBAL innodb_buffer_pool_size = ${BUFFER_POOL_MB * 1024 * 1024}`);
  const [rows] = await database.admin.query('SELECT @@GLOBAL.innodb_buffer_pool_size AS size');
  return `${Math.round(Number((rows as Array<{ size: number }>)[0].size) / 1024 / 1024)} MiB`;
}

async function measurePhase(
  database: BenchDatabase,
  service: RunningServer,
  account: BenchAccount,
  size: number,
  email: (index: number) => string,
  log: GeneralLog | undefined,
): Promise<Phase> {
  const random = (n: number) => Math.floor(Math.random() * n);
  // Contacts spread over the whole account, so that no size is read from a warm corner.
  const sampleIndexes = new Set<number>();
  while (sampleIndexes.size < Math.min(SAMPLE, size)) sampleIndexes.add(random(size));
  const sampleIds = await contactIdsByEmail(database.admin, account.accountId, [...sampleIndexes].map(email));
  const pick500 = () => {
    const ids = new Set<string>();
    while (ids.size < Math.min(500, sampleIds.length)) ids.add(sampleIds[random(sampleIds.length)]);
    return [...ids];
  };
  let counter = 0;
  const freshSequences: string[] = [];
  const enrolled: Array<{ sequenceId: string; contactIds: string[] }> = [];

  const requests: Requests = {
    get: { method: 'GET', expect: 200, next: () => ({ path: `/api/v1/contacts/${sampleIds[random(sampleIds.length)]}` }) },
    'by-email': {
      method: 'GET',
      expect: 200,
      next: () => ({ path: `/api/v1/contacts/by-email/${encodeURIComponent(email(random(size)))}` }),
    },
    upsert: {
      method: 'POST',
      expect: 200,
      next: () => ({ path: '/api/v1/contacts/upsert', body: JSON.stringify({ email: email(random(size)), customFields: { n: counter++ } }) }),
    },
    batch: {
      method: 'POST',
      expect: 201,
      next: () => {
        const n = counter++;
        const indexes = new Set<number>();
        while (indexes.size < Math.min(100, size)) indexes.add(random(size));
        const contacts = [...indexes].map((index) => ({ email: email(index), customFields: { n } }));
        return { path: '/api/v1/contacts/batch', body: JSON.stringify({ contacts }) };
      },
    },
    enroll: {
      method: 'POST',
      expect: 201,
      next: () => {
        const sequenceId = freshSequences.shift();
        if (!sequenceId) throw new Error('bench:scale: no fresh sequence left');
        const contactIds = pick500();
        enrolled.push({ sequenceId, contactIds });
        return { path: `/api/v1/sequences/${sequenceId}/enroll`, body: JSON.stringify({ contactIds }) };
      },
    },
    status: {
      method: 'GET',
      expect: 200,
      next: () => {
        const { sequenceId, contactIds } = enrolled[random(enrolled.length)];
        return { path: `/api/v1/sequences/${sequenceId}/enrollments/${contactIds[random(contactIds.length)]}` };
      },
    },
  };

  const run = (name: EndpointName, size: { amount?: number; seconds?: number }) =>
    runLoad(
      {
        base: service.base,
        apiKey: account.key,
        method: requests[name].method,
        connections: CONNECTIONS,
        expectStatus: requests[name].expect,
        next: requests[name].next,
        ...size,
      },
      service.pid,
    );

  const results = new Map<EndpointName, LoadResult>();
  for (const name of ENDPOINTS) {
    let result: LoadResult;
    if (name === 'enroll') {
      // Each request enrolls 500 contacts into a fresh sequence: sized from a short probe.
      freshSequences.push(...(await account.newSequences(Math.max(3, CONNECTIONS * 2))));
      const probe = await run('enroll', { amount: freshSequences.length });
      const amount = Math.max(CONNECTIONS * 2, Math.round(probe.perSecond * SECONDS));
      freshSequences.push(...(await account.newSequences(amount)));
      result = await run('enroll', { amount });
    } else {
      await run(name, { seconds: WARMUP_SECONDS });
      result = await run(name, { seconds: SECONDS });
    }
    if (result.wrong > 0) progress(`  ${name}: ${result.wrong} wrong answers`);
    results.set(name, result);
    progress(`${size} contacts: ${name.padEnd(8)} p50 ${fixed(result.p50, 2)} ms  p99 ${fixed(result.p99, 2)} ms  (${result.ok} requests)`);
  }

  const toUnenroll = [...enrolled];
  const explainOnly: Phase['explainOnly'] = [
    {
      method: 'POST',
      expect: 202,
      next: () => ({
        path: `/api/v1/sequences/${enrolled[0].sequenceId}/trigger`,
        body: JSON.stringify({ contact: { email: email(random(size)) } }),
      }),
    },
    {
      method: 'POST',
      expect: 200,
      next: () => {
        const { sequenceId, contactIds } = toUnenroll.shift()!;
        return { path: `/api/v1/sequences/${sequenceId}/unenroll`, body: JSON.stringify({ contactIds }) };
      },
    },
  ];
  return { size, results, requests, explainOnly, freshSequences, tables: await tableSizes(database, account.accountId) };
}

// Every statement the endpoints' requests send, with its values, from the general log. The
// service is started again with the log on: MariaDB writes an Execute with its values only when
// the statement was prepared while the log was on.
async function captureStatements(
  phase: Phase,
  account: BenchAccount,
  log: GeneralLog,
  spec: ServerSpec,
  logDir: string,
): Promise<string[]> {
  const service = await startServer(spec, logDir);
  phase.freshSequences.push(...(await account.newSequences(2)));
  await log.start();
  try {
    for (const { method, expect, next } of [...ENDPOINTS.map((name) => phase.requests[name]), ...phase.explainOnly]) {
      await runLoad({ base: service.base, apiKey: account.key, method, connections: 1, amount: 2, expectStatus: expect, next }, service.pid);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    return (await log.statements()).map((s) => s.sql);
  } finally {
    await log.stop();
    await service.stop();
  }
}

async function tableSizes(database: BenchDatabase, accountId: string): Promise<string> {
  const [rows] = await database.admin.query(
    `SELECT table_name AS name, ROUND((data_length + index_length) / 1048576) AS mib
       FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('contacts', 'sequence_runs')`,
  );
  const [[count]] = (await database.admin.query('SELECT COUNT(*) AS n FROM contacts WHERE account_id = ?', [accountId])) as unknown as [
    Array<{ n: number }>,
  ];
  return `${count.n} contacts in the account; ${(rows as Array<{ name: string; mib: number }>).map((r) => `${r.name} ${r.mib} MiB`).join(', ')}`;
}

function report(run: {
  database: BenchDatabase;
  service: RunningServer;
  bufferPool: string;
  // Per size: how long InnoDB took to settle after the seed, before the measurement.
  settles: string[];
  seeds: Array<SeedResult & { from: number }>;
  phases: Phase[];
  explained: ExplainedStatement[];
  logged: boolean;
  startedLoad: string;
}) {
  out('# npm run bench:scale: the same requests at two sizes of one account');
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${run.database.describe}; InnoDB buffer pool ${run.bufferPool}`);
  out(`Service:  ${run.service.spec.describe}`);
  out(`Load:     ${CONNECTIONS} connection(s), ${SECONDS} s per endpoint after ${WARMUP_SECONDS} s of warm-up; enroll by a number of requests`);
  out(`Settled:  ${run.settles.join('; ')} (purge caught up, under 1 % of the buffer pool dirty)`);
  out();
  out('## Seeding through POST /contacts/batch (100 per request)');
  out();
  const total = run.seeds.reduce((sum, s) => ({ contacts: sum.contacts + s.contacts, seconds: sum.seconds + s.seconds }), {
    contacts: 0,
    seconds: 0,
  });
  out(
    table(
      ['contacts', 'seconds', 'contacts/s'],
      [
        ...run.seeds.map((s) => [`${s.from}..${s.from + s.contacts}`, fixed(s.seconds, 1), fixed(s.perSecond, 0)]),
        ['all', fixed(total.seconds, 1), fixed(total.contacts / total.seconds, 0)],
      ],
    ),
  );
  for (const phase of run.phases) out(`At ${phase.size}: ${phase.tables}`);

  const [small, large] = run.phases;
  out();
  out(`## Latency at ${small.size} and at ${large?.size ?? '-'} contacts (ms), and the ratio large ÷ small (target ≤ 1.2)`);
  out();
  out(
    table(
      ['endpoint', 'p50 small', 'p99 small', 'p50 large', 'p99 large', 'p50 ratio', 'p99 ratio', 'requests'],
      ENDPOINTS.map((name) => {
        const a = small.results.get(name)!;
        const b = large?.results.get(name);
        return [
          name,
          fixed(a.p50, 2),
          fixed(a.p99, 2),
          fixed(b?.p50 ?? NaN, 2),
          fixed(b?.p99 ?? NaN, 2),
          fixed((b?.p50 ?? NaN) / a.p50, 2),
          fixed((b?.p99 ?? NaN) / a.p99, 2),
          `${a.ok} / ${b?.ok ?? '-'}`,
        ];
      }),
    ),
  );
  out();
  out(`## EXPLAIN of every statement the requests sent (general log, at ${run.phases.at(-1)!.size} contacts)`);
  out();
  if (!run.logged) {
    out('Not captured: BENCH_CHECK=1 turns on the general log (it needs the right to SET GLOBAL general_log).');
  } else {
    const rows: string[][] = [];
    for (const statement of run.explained) {
      statement.rows.forEach((row, i) =>
        rows.push([
          i === 0 ? abbreviate(statement.shape) : '',
          row.table ?? '-',
          row.type ?? '-',
          row.key ?? '-',
          row.rows === null ? '-' : String(row.rows),
          i === 0 ? statement.verdict : '',
        ]),
      );
    }
    out(table(['statement', 'table', 'type', 'key', 'rows', 'verdict'], rows));
    const scans = run.explained.filter((s) => /^(FULL SCAN|WIDE READ)/.test(s.verdict));
    out();
    out(scans.length === 0 ? 'No full scans, no wide reads.' : `${scans.length} statement(s) with a FULL SCAN or a WIDE READ (above).`);
  }
  out();
  out(`Load average (1 min): ${run.startedLoad} at the start, ${loadAverage()} at the end.`);
}

// Long column lists and value lists shortened, the clauses that pick rows kept.
function abbreviate(shape: string): string {
  const short = shape
    .replace(/^SELECT (.{40}).*? FROM /, 'SELECT $1… FROM ')
    .replace(/^INSERT INTO (\w+) \(.*?\) VALUES/, 'INSERT INTO $1 (…) VALUES');
  return short.length > 110 ? `${short.slice(0, 107)}...` : short;
}

main().catch((error) => {
  process.stderr.write(`bench:scale failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
