import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBenchDatabase } from './lib/database';
import { contactIdsByEmail, createBenchAccount, seedContacts } from './lib/fixture';
import { runLoad, type LoadResult } from './lib/load';
import { fixed, median, medianCells, spread, table } from './lib/report';
import { makeLogDir, serviceSpec, startServer, type RunningServer, type ServerSpec } from './lib/servers';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench:sqlite`: the service on its embedded default (a SQLite file) against the same
// service on MariaDB, on a single-user GET /contacts/{id} (one connection): CPU per request,
// the ratio taken inside each round (issue 8 asks SQLite ÷ MariaDB ≤ 1.2). A third server runs
// the SQLite service with `--enable-source-maps`, as a developer's `node` might: the cost of a
// stack read per statement shows there. bench/README.md says how to read it.

const ROUNDS = numberFrom('BENCH_ROUNDS', 3);
const SECONDS = numberFrom('BENCH_SECONDS', 10);
const WARMUP_SECONDS = numberFrom('BENCH_WARMUP_SECONDS', 2);
const CONTACTS = 500;

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);

interface Target {
  name: string;
  server: RunningServer;
  key: string;
  ids: string[];
}

async function main() {
  const startedLoad = loadAverage();
  const tag = randomBytes(4).toString('hex');
  const logDir = makeLogDir('bench-sqlite');
  const database = await openBenchDatabase();
  const sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sqlite-db-'));
  const sqliteUrl = `sqlite:${path.join(sqliteDir, 'service.sqlite')}`;

  const specs: Array<{ spec: ServerSpec; url: string }> = [];
  const mariadb = serviceSpec({ databaseUrl: database.url, rateLimitPerMinute: 1_000_000_000, logDir });
  const sqlite = serviceSpec({ databaseUrl: sqliteUrl, rateLimitPerMinute: 1_000_000_000, logDir });
  specs.push({ spec: { ...mariadb, name: 'mariadb' }, url: database.url });
  specs.push({ spec: { ...sqlite, name: 'sqlite' }, url: sqliteUrl });
  specs.push({
    spec: { ...sqlite, name: 'sqlite+maps', args: ['--enable-source-maps', ...sqlite.args], describe: `${sqlite.describe} --enable-source-maps` },
    url: sqliteUrl,
  });

  const targets: Target[] = [];
  const accounts: Array<{ close(): Promise<void> }> = [];
  for (const { spec, url } of specs) {
    const server = await startServer(spec, logDir);
    const account = await createBenchAccount(url, `bench ${tag} ${spec.name}`);
    accounts.push(account);
    const emails = Array.from({ length: CONTACTS }, (_, i) => `${spec.name}-${i}-${tag}@bench.test`);
    await seedContacts(server, account.key, CONTACTS, (i) => emails[i], 2);
    const ids = url === database.url ? await contactIdsByEmail(database.admin, account.accountId, emails) : await sqliteIds(server, account.key, emails);
    targets.push({ name: spec.name, server, key: account.key, ids });
  }
  progress(`servers up (logs in ${logDir}): ${targets.map((t) => `${t.name} pid ${t.server.pid}`).join(', ')}`);

  const get = (target: Target, load: { seconds: number }) => {
    let next = 0;
    return runLoad(
      {
        base: target.server.base,
        apiKey: target.key,
        method: 'GET',
        connections: 1,
        ...load,
        expectStatus: 200,
        next: () => ({ path: `/api/v1/contacts/${target.ids[next++ % target.ids.length]}` }),
      },
      target.server.pid,
    );
  };

  for (const target of targets) await get(target, { seconds: WARMUP_SECONDS });
  const results = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    // Who goes first rotates.
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const target of order) results.get(target.name)!.push(await get(target, { seconds: SECONDS }));
    progress(`round ${round + 1} of ${ROUNDS} done`);
  }

  out('# npm run bench:sqlite: single-user GET /contacts/{id}, the service on SQLite and on MariaDB');
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${database.describe}; SQLite file ${sqliteUrl}`);
  out(`Load:     1 connection, ${ROUNDS} round(s) of ${SECONDS} s per server`);
  out();
  out(
    table(
      ['server', 'req/s', 'CPU ms/req', 'p50 ms', 'p99 ms', 'requests', 'wrong'],
      targets.map(({ name }) => {
        const runs = results.get(name)!;
        return [
          name,
          ...medianCells(runs),
        ];
      }),
    ),
  );
  out();
  const ratio = (name: string) => {
    const mine = results.get(name)!;
    const base = results.get('mariadb')!;
    return mine.map((r, i) => r.cpuMsPerRequest / base[i].cpuMsPerRequest);
  };
  out(
    table(
      ['÷ mariadb, per round', 'CPU ms/req: median (min–max)'],
      ['sqlite', 'sqlite+maps'].map((name) => [name, spread(ratio(name))]),
    ),
  );
  out();
  out(`Load average: ${startedLoad} at the start, ${loadAverage()} at the end.`);

  for (const target of targets) await target.server.stop();
  for (const account of accounts) await account.close();
  await database.close();
  fs.rmSync(sqliteDir, { recursive: true, force: true });
}

// The ids of seeded contacts, read through the API (the driver has no SQLite client of its own).
async function sqliteIds(server: RunningServer, key: string, emails: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const email of emails) {
    const response = await fetch(`${server.base}/api/v1/contacts/by-email/${encodeURIComponent(email)}`, { headers: { 'x-api-key': key } });
    if (response.status !== 200) throw new Error(`by-email ${email}: ${response.status}`);
    ids.push(((await response.json()) as { contact: { id: string } }).contact.id);
  }
  return ids;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
