import { randomBytes } from 'node:crypto';
import type { Connection } from 'mysql2/promise';
import { openDatabase } from '../src/db/database';
import { contactListScope, listContacts, type ContactListFilters } from '../src/services/contacts/list-contacts';
import { encodeCursor } from '../src/services/lists/cursor';
import { listSequences } from '../src/services/sequences/list-sequences';
import { listContactRuns, listSequenceRuns } from '../src/services/sequences/list-runs';
import { openBenchDatabase, waitForQuietInnodb, type BenchDatabase } from './lib/database';
import { createBenchAccount, type BenchAccount } from './lib/fixture';
import { runLoad, type LoadResult, type NextRequest } from './lib/load';
import { fixed, table } from './lib/report';
import { makeLogDir, serviceSpec, startServer, type RunningServer } from './lib/servers';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench:lists`: the list endpoints at two sizes of one account. The account is seeded
// through the bulk path (POST /contacts/batch) to BENCH_LIST_SMALL contacts, then to
// BENCH_LIST_CONTACTS; at each size every list and filter is timed, on pages that start at
// random places in the account (a keyset page should cost the same anywhere), and at the end
// each list statement is EXPLAINed as the service sends it.
//
// The seeded contacts: email l<i>-<run>@list.test; every one tagged `seed`, one in 10 `tenth`,
// one in 1000 `rare`; one in 20 unsubscribed from email, one in 3 from WhatsApp.

const LARGE = numberFrom('BENCH_LIST_CONTACTS', 1_000_000);
const SMALL = Math.min(numberFrom('BENCH_LIST_SMALL', 10_000), LARGE);
const SECONDS = numberFrom('BENCH_SECONDS', 5);
const WARMUP_SECONDS = numberFrom('BENCH_WARMUP_SECONDS', 1);
const SEED_CONNECTIONS = numberFrom('BENCH_SEED_CONNECTIONS', 4);
const BUFFER_POOL_MB = numberFrom('BENCH_LIST_BUFFER_POOL_MB', 2048);
const RATE_LIMIT = numberFrom('BENCH_RATE_LIMIT', 1_000_000_000);
const POSITIONS = 40;

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench:lists: ${text}\n`);

interface Case {
  name: string;
  filters: ContactListFilters;
  // Pages from random positions (a cursor) or only the first page.
  deep: boolean;
  // The page size, when 50 would be more than the case matches at the small size: both sizes
  // then answer full pages of the same length, and the ratio compares like with like.
  limit?: number;
}

// q cases name one contact's prefix, so that their matches stay the same at both sizes, and one
// popular prefix, whose matches grow with the account (the cost of q follows its matches).
function contactCases(size: number, email: (i: number) => string): Case[] {
  const one = email(Math.floor(size / 2)).split('@')[0];
  return [
    { name: 'default (newest first)', filters: {}, deep: true },
    { name: 'sort=updatedAt', filters: { sort: 'updatedAt' }, deep: true },
    { name: 'tag=seed (all)', filters: { tag: 'seed' }, deep: true },
    { name: 'tag=tenth (10 %)', filters: { tag: 'tenth' }, deep: true },
    { name: 'tag=rare (0.1 %, limit=5)', filters: { tag: 'rare' }, deep: false, limit: 5 },
    { name: 'tag=tenth sort=updatedAt', filters: { tag: 'tenth', sort: 'updatedAt' }, deep: true },
    { name: 'emailSubscriptionStatus=unsubscribed (5 %)', filters: { emailSubscriptionStatus: 'unsubscribed' }, deep: true },
    { name: 'whatsappSubscriptionStatus=unsubscribed (33 %)', filters: { whatsappSubscriptionStatus: 'unsubscribed' }, deep: true },
    { name: 'email + whatsapp unsubscribed', filters: { emailSubscriptionStatus: 'unsubscribed', whatsappSubscriptionStatus: 'unsubscribed' }, deep: false },
    { name: 'tag=tenth + emailSubscriptionStatus', filters: { tag: 'tenth', emailSubscriptionStatus: 'unsubscribed' }, deep: false },
    { name: `q=${one}- (1 match)`, filters: { q: `${one}-` }, deep: false },
    { name: 'q=l12 (1.1 %: grows with size)', filters: { q: 'l12' }, deep: false },
    { name: 'createdAfter (last 10 %)', filters: { createdAfter: 'LAST_TENTH' }, deep: false },
    { name: 'updatedSince sort=updatedAt (last 10 %)', filters: { updatedSince: 'LAST_TENTH', sort: 'updatedAt' }, deep: false },
  ];
}

interface Phase {
  size: number;
  results: Array<{ name: string; result: LoadResult }>;
}

async function main() {
  const startedLoad = loadAverage();
  const tag = randomBytes(4).toString('hex');
  const logDir = makeLogDir('bench-lists');
  const database = await openBenchDatabase();
  if (database.own) await database.admin.query(`SET GLOBAL innodb_buffer_pool_size = ${BUFFER_POOL_MB * 1024 * 1024}`);
  const spec = serviceSpec({ databaseUrl: database.url, rateLimitPerMinute: RATE_LIMIT, logDir });
  const service = await startServer(spec, logDir);
  const account = await createBenchAccount(database.url, `lists ${tag}`);
  const email = (index: number) => `l${index}-${tag}@list.test`;
  const runs = await seedRuns(service, account, email);

  const phases: Phase[] = [];
  const seeds: string[] = [];
  let seeded = 0;
  for (const size of SMALL === LARGE ? [LARGE] : [SMALL, LARGE]) {
    progress(`seeding contacts ${seeded}..${size} through POST /contacts/batch, ${SEED_CONNECTIONS} connections`);
    const started = performance.now();
    await seed(service, account.key, seeded, size, email);
    const seconds = (performance.now() - started) / 1000;
    seeds.push(`${seeded}..${size}: ${fixed(seconds, 1)} s (${fixed((size - seeded) / seconds, 0)} contacts/s)`);
    seeded = size;
    await database.admin.query('ANALYZE TABLE contacts, contact_tags, sequence_runs');
    const settled = await waitForQuietInnodb(database.admin);
    seeds.push(`InnoDB ${settled.quiet ? 'quiet' : 'still busy (bound reached)'} after ${fixed(settled.seconds, 0)} s`);
    phases.push(await measure(database, service, account, size, email, runs));
  }
  await service.stop();
  const explained = await explainLists(database, account.accountId, LARGE, email, runs);
  report(database, service, seeds, phases, explained, startedLoad);
  await account.close();
  await database.close();
}

// A sequence with a few hundred runs (one per contact) for the run lists, made through trigger.
async function seedRuns(service: RunningServer, account: BenchAccount, email: (i: number) => string) {
  const [sequenceId] = await account.newSequences(1);
  let n = 0;
  const result = await runLoad(
    {
      base: service.base,
      apiKey: account.key,
      method: 'POST',
      connections: 2,
      amount: 300,
      expectStatus: 202,
      next: () => ({ path: `/api/v1/sequences/${sequenceId}/trigger`, body: JSON.stringify({ contact: contactItem(n++, email) }) }),
    },
    service.pid,
  );
  if (result.wrong > 0) throw new Error(`seeding runs: ${result.wrong} failed`);
  return { sequenceId };
}

function contactItem(i: number, email: (i: number) => string) {
  const tags = ['seed', ...(i % 10 === 0 ? ['tenth'] : []), ...(i % 1000 === 0 ? ['rare'] : [])];
  return {
    email: email(i),
    tags,
    firstName: 'Ada',
    customFields: { plan: 'pro', n: i },
    emailSubscriptionStatus: i % 20 === 0 ? 'unsubscribed' : 'subscribed',
    whatsappSubscriptionStatus: i % 3 === 0 ? 'unsubscribed' : 'subscribed',
  };
}

async function seed(service: RunningServer, key: string, from: number, to: number, email: (i: number) => string) {
  let next = from;
  const batches = Math.ceil((to - from) / 100);
  const result = await runLoad(
    {
      base: service.base,
      apiKey: key,
      method: 'POST',
      connections: Math.min(SEED_CONNECTIONS, batches),
      amount: batches,
      expectStatus: 201,
      next: () => {
        const start = next;
        next = Math.min(to, next + 100);
        const contacts = [];
        for (let i = start; i < next; i += 1) contacts.push(contactItem(i, email));
        return { path: '/api/v1/contacts/batch', body: JSON.stringify({ contacts }) };
      },
    },
    service.pid,
  );
  if (result.wrong > 0) throw new Error(`seeding: ${result.wrong} batches failed`);
}

// The instant after which the last tenth of the account was created (and last changed).
async function lastTenth(admin: Connection, accountId: string, size: number): Promise<string> {
  const [rows] = await admin.query(
    'SELECT created_at AS at FROM contacts WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?',
    [accountId, Math.floor(size / 10)],
  );
  return new Date((rows as Array<{ at: Date }>)[0].at).toISOString();
}

function resolve(filters: ContactListFilters, last: string): ContactListFilters {
  return {
    ...filters,
    ...(filters.createdAfter && { createdAfter: last }),
    ...(filters.updatedSince && { updatedSince: last }),
  };
}

function query(filters: ContactListFilters, extra: Record<string, string> = {}, limit = 50): string {
  const params = new URLSearchParams({ limit: String(limit), ...(filters as Record<string, string>), ...extra });
  return `/api/v1/contacts?${params}`;
}

// Cursors at random places of the walk, as a client deep in it would send them.
async function randomCursors(admin: Connection, accountId: string, size: number, filters: ContactListFilters): Promise<string[]> {
  const scope = contactListScope({ accountId, ...filters });
  const column = filters.sort === 'updatedAt' ? 'updated_at' : 'created_at';
  const cursors: string[] = [];
  for (let i = 0; i < POSITIONS; i += 1) {
    const offset = Math.floor(Math.random() * size * 0.9);
    const [rows] = await admin.query(`SELECT ${column} AS at, id FROM contacts WHERE account_id = ? ORDER BY ${column}, id LIMIT 1 OFFSET ?`, [
      accountId,
      offset,
    ]);
    const row = (rows as Array<{ at: Date; id: string }>)[0];
    cursors.push(encodeCursor(scope, { at: new Date(row.at).getTime(), id: row.id }));
  }
  return cursors;
}

async function measure(
  database: BenchDatabase,
  service: RunningServer,
  account: BenchAccount,
  size: number,
  email: (i: number) => string,
  runs: { sequenceId: string },
): Promise<Phase> {
  const last = await lastTenth(database.admin, account.accountId, size);
  const results: Phase['results'] = [];
  const time = async (name: string, next: () => NextRequest) => {
    const plan = { base: service.base, apiKey: account.key, method: 'GET' as const, connections: 1, expectStatus: 200, next };
    await runLoad({ ...plan, seconds: WARMUP_SECONDS }, service.pid);
    const result = await runLoad({ ...plan, seconds: SECONDS }, service.pid);
    if (result.wrong > 0) progress(`  ${name}: ${result.wrong} wrong answers`);
    results.push({ name, result });
    progress(`${size}: ${name.padEnd(48)} p50 ${fixed(result.p50, 2)} ms  p99 ${fixed(result.p99, 2)} ms  (${result.ok})`);
  };

  for (const entry of contactCases(size, email)) {
    const filters = resolve(entry.filters, last);
    await time(`${entry.name}: first page`, () => ({ path: query(filters, {}, entry.limit) }));
    if (entry.deep) {
      const cursors = await randomCursors(database.admin, account.accountId, size, filters);
      let at = 0;
      await time(`${entry.name}: random page`, () => ({ path: query(filters, { cursor: cursors[at++ % cursors.length] }, entry.limit) }));
    }
  }
  await time('GET /sequences', () => ({ path: '/api/v1/sequences?limit=50' }));
  await time('GET /sequences/{id}', () => ({ path: `/api/v1/sequences/${runs.sequenceId}` }));
  await time('GET /sequences/{id}/runs', () => ({ path: `/api/v1/sequences/${runs.sequenceId}/runs?limit=50` }));
  await time('GET /sequences/{id}/runs?active=true', () => ({ path: `/api/v1/sequences/${runs.sequenceId}/runs?active=true` }));
  return { size, results };
}

interface Explained {
  name: string;
  sql: string;
  rows: Array<Record<string, unknown>>;
}

// Each list statement as the service sends it (captured from the services, values inline),
// with a cursor from the middle of the walk, and EXPLAIN's answer on the large account.
async function explainLists(
  database: BenchDatabase,
  accountId: string,
  size: number,
  email: (i: number) => string,
  runs: { sequenceId: string },
): Promise<Explained[]> {
  const statements: string[] = [];
  const db = openDatabase(database.url);
  // The services send their statements with bound values (src/db/direct-statements.ts): taken
  // here with their values, and written inline for EXPLAIN and the report.
  const query = db.sequelize.query.bind(db.sequelize) as (sql: unknown, options?: object) => Promise<unknown>;
  db.sequelize.query = ((sql: unknown, options?: { directStatement?: { values: unknown[] } }) => {
    if (typeof sql === 'string') statements.push(database.admin.format(sql, options?.directStatement?.values ?? []));
    return query(sql, options);
  }) as typeof db.sequelize.query;
  const explained: Explained[] = [];
  const last = await lastTenth(database.admin, accountId, size);
  const capture = async (name: string, fn: () => Promise<unknown>) => {
    statements.length = 0;
    await fn();
    for (const sql of statements.filter((s) => /^\s*SELECT/i.test(s))) {
      const [rows] = await database.admin.query(`EXPLAIN ${sql}`);
      explained.push({ name, sql, rows: rows as Array<Record<string, unknown>> });
    }
  };
  try {
    for (const entry of contactCases(size, email)) {
      const filters = resolve(entry.filters, last);
      const [cursor] = await randomCursors(database.admin, accountId, size, filters);
      await capture(entry.name, () => listContacts(db, { accountId, limit: entry.limit ?? 50, ...filters, ...(entry.deep && { cursor }) }));
    }
    await capture('sequences', () => listSequences(db, { accountId, limit: 50 }));
    await capture('sequence runs', () => listSequenceRuns(db, { accountId, sequenceId: runs.sequenceId, limit: 50 }));
    await capture('sequence runs active', () => listSequenceRuns(db, { accountId, sequenceId: runs.sequenceId, limit: 50, active: true }));
    const [[contact]] = (await database.admin.query('SELECT id FROM contacts WHERE account_id = ? AND email_normalized = ?', [
      accountId,
      email(1),
    ])) as unknown as [Array<{ id: string }>];
    await capture('contact runs', () => listContactRuns(db, { accountId, contactId: contact.id, limit: 50 }));
  } finally {
    await db.close();
  }
  return explained;
}

function report(
  database: BenchDatabase,
  service: RunningServer,
  seeds: string[],
  phases: Phase[],
  explained: Explained[],
  startedLoad: string,
) {
  out('# npm run bench:lists: the list endpoints at two sizes of one account');
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${database.describe}`);
  out(`Service:  ${service.spec.describe}`);
  out(`Load:     1 connection, ${SECONDS} s per case after ${WARMUP_SECONDS} s of warm-up; limit 50`);
  out(`Seeding:  ${seeds.join('; ')}`);
  out();
  const [small, large] = phases;
  out(`## Latency at ${small.size} and at ${large?.size ?? '-'} contacts (ms), and the ratio large ÷ small`);
  out();
  out(
    table(
      ['list', 'p50 small', 'p99 small', 'p50 large', 'p99 large', 'p50 ratio', 'p99 ratio'],
      small.results.map(({ name, result: a }, i) => {
        const b = large?.results[i]?.result;
        return [name, fixed(a.p50, 2), fixed(a.p99, 2), fixed(b?.p50 ?? NaN, 2), fixed(b?.p99 ?? NaN, 2), fixed((b?.p50 ?? NaN) / a.p50, 2), fixed((b?.p99 ?? NaN) / a.p99, 2)];
      }),
    ),
  );
  out();
  out(`## EXPLAIN of each list statement at ${phases.at(-1)!.size} contacts (a page from the middle of the walk where the case has one)`);
  out();
  for (const entry of explained) {
    out(`### ${entry.name}`);
    out();
    out('```sql');
    out(entry.sql.replace(/^SELECT .*? FROM /, 'SELECT … FROM '));
    out('```');
    out(
      table(
        ['table', 'type', 'key', 'key_len', 'rows', 'Extra'],
        entry.rows.map((row) => [row.table, row.type, row.key, row.key_len, row.rows, row.Extra].map((v) => String(v ?? '-'))),
      ),
    );
    const scans = entry.rows.filter((row) => row.type === 'ALL' || row.type === 'index');
    out(scans.length > 0 ? 'FULL SCAN' : 'Index read: no full scan.');
    out();
  }
  out(`Load average (1 min): ${startedLoad} at the start, ${loadAverage()} at the end.`);
}

main().catch((error) => {
  process.stderr.write(`bench:lists failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
