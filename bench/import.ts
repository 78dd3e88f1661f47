import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app';
import { openDatabase, prepareDatabase, type Database } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import { createLogger } from '../src/logging/logger';
import { createAccount } from '../src/services/accounts';
import { createApiKey } from '../src/services/api-keys';
import { getImport } from '../src/services/imports/import-operations';
import { DEFAULT_IMPORT_RUN, runImports } from '../src/services/imports/run-import';
import { databaseNow } from '../src/db/sql/clock';
import { openBenchDatabase } from './lib/database';
import { fixed, table } from './lib/report';
import { machineLine, numberFrom } from './lib/settings';

// `npm run bench:import` (issue 37, "Importing contacts"): a contact import on MariaDB, as the
// service runs it: the file POSTed as text/csv to the app over loopback HTTP (streamed to the
// imports folder and scanned), then moved by the background task's batches (runImports, the
// task's pass, called in a loop). Two figures, each with its target:
// - rows per second for a 100,000-row file (target: at least 5,000), from the first batch's
//   claim to the import's completed status;
// - RSS growth for a 1,000,000-row file (target: under 50 MiB), the peak RSS sampled every
//   100 ms through the upload and the whole import, less the RSS before the upload, taken after
//   a full collection (node runs with --expose-gc).
// BENCH_DATABASE_URL picks the database (bench/lib/database.ts; or a sqlite: URL); BENCH_IMPORT_ROWS
// and BENCH_IMPORT_MEMORY_ROWS the sizes (0 skips a case), BENCH_IMPORT_BATCH the batch size.

const SPEED_ROWS = numberFrom('BENCH_IMPORT_ROWS', 100_000);
const MEMORY_ROWS = numberFrom('BENCH_IMPORT_MEMORY_ROWS', 1_000_000);
const BATCH = numberFrom('BENCH_IMPORT_BATCH', DEFAULT_IMPORT_RUN.batchSize);
const TARGET_ROWS_PER_SECOND = 5_000;
const TARGET_RSS_GROWTH_MIB = 50;
const MIB = 1024 * 1024;

async function main() {
  // A sqlite: URL measures the embedded database instead (the memory figure does not depend on it).
  const sqlite = process.env.BENCH_DATABASE_URL?.startsWith('sqlite:');
  const bench = sqlite
    ? { url: process.env.BENCH_DATABASE_URL!, describe: `SQLite at ${process.env.BENCH_DATABASE_URL}`, close: async () => undefined }
    : await openBenchDatabase();
  const db = openDatabase(bench.url);
  await prepareDatabase(db);
  await migrateToLatest(db);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-import-'));
  const app = createApp({ db, config: { rateLimitPerMinute: 1_000_000 }, logger: createLogger('silent'), imports: { dir } });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const lines = [`# bench:import: contact imports (issue 37)`, '', machineLine(), `Database: ${bench.describe}`, `Batch: ${BATCH} rows per transaction`, ''];
  const rows: string[][] = [];
  try {
    if (SPEED_ROWS > 0) {
      const result = await measure(db, port, dir, SPEED_ROWS, false);
      const rate = SPEED_ROWS / result.seconds;
      rows.push([SPEED_ROWS.toLocaleString('en'), 'rows/s', fixed(rate, 0), `>= ${TARGET_ROWS_PER_SECOND}`, rate >= TARGET_ROWS_PER_SECOND ? 'MET' : 'MISSED', result.note]);
    }
    if (MEMORY_ROWS > 0) {
      const result = await measure(db, port, dir, MEMORY_ROWS, true);
      const growth = result.rssGrowth / MIB;
      rows.push([MEMORY_ROWS.toLocaleString('en'), 'RSS growth MiB', fixed(growth, 1), `< ${TARGET_RSS_GROWTH_MIB}`, growth < TARGET_RSS_GROWTH_MIB ? 'MET' : 'MISSED', `${result.note}; ${fixed(MEMORY_ROWS / result.seconds, 0)} rows/s`]);
    }
    lines.push(table(['rows', 'figure', 'value', 'target', '', 'detail'], rows));
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    server.close();
    await db.close();
    await bench.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(db: Database, port: number, dir: string, count: number, sampleMemory: boolean) {
  const account = await createAccount(db, { name: `bench import ${count} ${Date.now()}`, maxActiveRuns: null });
  const { key } = await createApiKey(db, { accountId: account.id, name: 'bench' });
  const file = path.join(os.tmpdir(), `bench-import-${count}-${process.pid}.csv`);
  await writeFile(file, count, sampleMemory);
  // From a collected heap. The RSS figure is still, for the most part, V8's sizing of its heap:
  // a batch's rows live across several young-generation collections, so they die in the old
  // generation, which V8 lets grow to a few times what is live before it collects it (a 1M-row
  // file measured 31-41 MiB from a collected heap, 224 MiB without the collection; a 100,000-row
  // one 75-172). What the import keeps is the live heap, before and after, also printed.
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const before = process.memoryUsage().rss;
  let peak = before;
  // What the RSS was made of at its peak: V8's heap, and memory outside it (Buffers, the drivers').
  let atPeak = process.memoryUsage();
  const sample = () => {
    const usage = process.memoryUsage();
    if (usage.rss > peak) [peak, atPeak] = [usage.rss, usage];
  };
  const sampler = sampleMemory ? setInterval(sample, 100) : undefined;
  try {
    const uploadStarted = performance.now();
    const answer = await post(port, key, file);
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    if (answer.status !== 202) throw new Error(`upload answered ${answer.status}: ${answer.body}`);
    const id = (JSON.parse(answer.body) as { import: { id: string } }).import.id;
    const settings = { ...DEFAULT_IMPORT_RUN, batchSize: BATCH, dir, owner: 'bench', now: () => databaseNow(db) };
    const started = performance.now();
    while (await runImports(db, settings));
    const seconds = (performance.now() - started) / 1000;
    const done = await getImport(db, { accountId: account.id, id });
    if (done.status !== 'completed' || done.inserted !== count) throw new Error(`import ended ${done.status} with ${done.inserted} inserted of ${count}`);
    sample();
    const size = fs.statSync(file).size / MIB;
    let makeUp = '';
    if (sampleMemory) {
      collect();
      const heapAfter = process.memoryUsage().heapUsed;
      makeUp = `, RSS ${fixed(before / MIB, 0)} -> ${fixed(peak / MIB, 0)} MiB, live heap ${fixed(heapBefore / MIB, 0)} -> ${fixed(heapAfter / MIB, 0)} MiB; at the RSS peak heap ${fixed(atPeak.heapTotal / MIB, 0)} MiB (${fixed(atPeak.heapUsed / MIB, 0)} used), external ${fixed(atPeak.external / MIB, 0)} MiB`;
    }
    return { seconds, rssGrowth: peak - before, note: `${fixed(size, 1)} MiB file, upload and scan ${fixed(uploadSeconds, 1)} s, import ${fixed(seconds, 1)} s${makeUp}` };
  } finally {
    if (sampler) clearInterval(sampler);
    fs.rmSync(file, { force: true });
  }
}

// A full collection (the npm script runs node with --expose-gc; without it the memory figure would
// be a fresh process's heap growth, not the import's).
function collect() {
  if (!global.gc) throw new Error('run with node --expose-gc (npm run bench:import does)');
  global.gc();
}

// Rows like a CRM's export: email, names, tags, two custom fields. `slim`: email, first name and
// 0 to 3 tags, so that a million rows stay under the 50 MB limit. The tags' count varies from row
// to row as in a real export, so each batch's contact_tags INSERT has its own row count: a new
// statement shape, which is how a driver's per-connection statement cache would show up here.
async function writeFile(file: string, count: number, slim = false) {
  const out = fs.createWriteStream(file);
  out.write(slim ? 'email,firstName,tags\n' : 'email,firstName,lastName,tags,plan,city\n');
  const run = Date.now().toString(36);
  for (let i = 0; i < count; i += 10_000) {
    let block = '';
    for (let j = i; j < Math.min(count, i + 10_000); j++) {
      block += slim ? `p${j}.${run}@example.com,F${j},${SLIM_TAGS[tagCount(j)]}\n` : `person${j}.${run}@example.com,First${j},Last${j},"customer,newsletter",${j % 3 === 0 ? 'pro' : 'basic'},City ${j % 100}\n`;
    }
    if (!out.write(block)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise((resolve) => out.end(() => resolve(undefined)));
}

const SLIM_TAGS = ['', 'a', '"a,b"', '"a,b,c"'];

// 0 to 3, scattered (Knuth's multiplicative hash), so that no two batches need have the same sum.
function tagCount(row: number): number {
  return (Math.imul(row, 2654435761) >>> 0) % 4;
}

// The file streamed as the body, as curl --data-binary @file does.
function post(port: number, key: string, file: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { port, host: '127.0.0.1', method: 'POST', path: '/api/v1/contacts/imports?tags=imported', headers: { 'x-api-key': key, 'content-type': 'text/csv', 'content-length': fs.statSync(file).size } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
