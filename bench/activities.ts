import { randomBytes } from 'node:crypto';
import type { Connection } from 'mysql2/promise';
import { DEFAULT_DATABASE_TIMEOUTS } from '../src/config';
import { openDatabase, prepareDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import type { ActivityInput } from '../src/schemas/activity';
import type { StepInput } from '../src/schemas/sequence-definition';
import { createAccount } from '../src/services/accounts';
import { createApiKey } from '../src/services/api-keys';
import { createSequence } from '../src/services/sequences/sequence-admin';
import { pacedBatches, poster, type Poster } from './activities/post';
import { idOf, seededEmail, seedWaitingRuns, type WaitingSeed } from './activities/seed-waits';
import { lockStatus, profileBatch, type BatchProfile } from './activities/statement-profile';
import { passFail, percentile, sleep } from './engine/context';
import { ensureNumbers } from './engine/seed';
import { openBenchDatabase } from './lib/database';
import { runLoad, type LoadResult } from './lib/load';
import { fixed, table } from './lib/report';
import { makeLogDir, serviceSpec, startServer, type RunningServer } from './lib/servers';
import { loadAverage, machineLine, numberFrom } from './lib/settings';

// `npm run bench:activities`: the activity intake's figures on MariaDB (issue 36, "Figures"),
// each printed beside its target with PASS/FAIL:
//   1. intake: activities per second in batches of 500 (POST /api/v1/activities/batch), contacts
//      named by id and by email, with BENCH_WAITING runs waiting for other keys;
//   2. the time from a matching activity's 202 to the start of the waiting run's next step
//      (run_step_executions.started_at), p50/p95/p99, alone and beside intake traffic;
//   3. entry by event at the same rate, with the same contact several times in a batch and in
//      concurrent batches: at most one active run per (sequence, contact).
// The service is `node dist/server.js` with its engine on, a child of this process. How to read
// the output: bench/README.md.

const WAITING = numberFrom('BENCH_WAITING', 1_000_000);
const PROBES = numberFrom('BENCH_PROBES', 200);
const INTAKE_BATCHES = numberFrom('BENCH_INTAKE_BATCHES', 60);
const ENTRY_BATCHES = numberFrom('BENCH_ENTRY_BATCHES', 60);
const CONNECTIONS = numberFrom('BENCH_CONNECTIONS', 4);
const BACKGROUND_RATE = numberFrom('BENCH_BACKGROUND_RATE', 3_000);
const BATCH = 500;

const TARGET_RATE = 3_000;
const TARGET_P99_MS = 1_000;
const TIMEOUT = 'PT3H';
const TIMEOUT_MS = 3 * 3600 * 1000;

const out = (text = '') => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);

interface Verdict {
  figure: string;
  measured: string;
  target: string;
  ok: boolean;
}

async function main() {
  const startedLoad = loadAverage();
  const logDir = makeLogDir('bench-activities');
  const database = await openBenchDatabase();
  if (!database.own) await emptyDatabase(database.admin, database.url);
  {
    const db = openDatabase(database.url);
    await prepareDatabase(db);
    await migrateToLatest(db);
    await db.close();
  }
  await ensureNumbers(database.admin);
  const db = openDatabase(database.url, { timeouts: DEFAULT_DATABASE_TIMEOUTS });
  const account = await createAccount(db, { name: `bench activities ${randomBytes(4).toString('hex')}`, maxActiveRuns: null });
  const { key } = await createApiKey(db, { accountId: account.id, name: 'bench activities' });
  const cartSteps: StepInput[] = [
    { id: 'checkout', type: 'wait_for', activity: 'checkout_completed', match: { cartId: '{{ trigger.properties.cartId }}' }, timeout: TIMEOUT, next: 'thanks', onTimeout: 'remind' },
    { id: 'thanks', type: 'tag', add: ['bought'] },
    { id: 'done', type: 'exit' },
    { id: 'remind', type: 'tag', add: ['reminded'] },
  ] as StepInput[];
  const cart = await createSequence(db, { accountId: account.id, name: 'abandoned cart', status: 'active', steps: cartSteps, entry: { activity: 'cart_abandoned' } });
  const orders = await createSequence(db, {
    accountId: account.id,
    name: 'order follow-up',
    status: 'active',
    steps: [{ id: 'hold', type: 'wait', duration: 'P7D' }] as StepInput[],
    entry: { activity: 'order_placed' },
  });
  await db.close();

  out('# npm run bench:activities: activity intake, wait_for matched by key, entry by event (issue 36)');
  out();
  out(`Machine:  ${machineLine()}`);
  out(`Database: ${database.describe}`);
  const pool = await bufferPool(database.admin);
  out(`          innodb_buffer_pool_size ${fixed(pool, 0)} MiB`);
  out('Service:  node dist/server.js, NODE_ENV=production, SEQUENCE_ENGINE=on (the engine in the server\'s process: an activity that moves a run wakes it), WEBHOOK_DISPATCHER=off');
  out(`Load:     autocannon in this process, ${CONNECTIONS} connections, batches of ${BATCH}`);

  progress(`seeding ${WAITING} runs waiting at the wait_for step (contacts, runs, run_waits)`);
  const seed = await seedWaitingRuns(database.admin, { accountId: account.id, sequenceId: cart.id, stepId: 'checkout', activity: 'checkout_completed', count: WAITING, timeoutMs: TIMEOUT_MS });
  const seedSeconds = seed.seconds.contacts + seed.seconds.runs + seed.seconds.waits;
  out();
  out('## Seed: runs waiting for other keys');
  out();
  out(
    table(
      ['waiting runs', 'contacts (s)', 'sequence_runs (s)', 'run_waits (s)', 'in all (s)', 'rows/s'],
      [[String(WAITING), fixed(seed.seconds.contacts, 1), fixed(seed.seconds.runs, 1), fixed(seed.seconds.waits, 1), fixed(seedSeconds, 1), fixed((3 * WAITING) / seedSeconds, 0)]],
    ),
  );
  out();
  out(
    `Each its own contact, at step \`checkout\` (wait_for checkout_completed, match cartId, timeout ${TIMEOUT}): running, step begun now, due at the timeout, ` +
      'its run_waits row with cartId "other-<n>". INSERT ... SELECT over bench_numbers, 50,000 rows a statement (bench/activities/seed-waits.ts).',
  );
  await database.admin.query('ANALYZE TABLE contacts, sequence_runs, run_waits');

  // The engine on: in the server's process, as `npm start` runs it (the benches' servers have it off).
  const spec = serviceSpec({ databaseUrl: database.url, rateLimitPerMinute: 1_000_000_000, logDir });
  spec.env.SEQUENCE_ENGINE = 'on';
  const server = await startServer(spec, logDir);
  const verdicts: Verdict[] = [];
  try {
    const client = poster(server.base, key);
    const traffic = unrelatedTraffic(seed);

    // 1. Intake.
    progress('intake: warm-up');
    await intake(server, key, Array.from({ length: 4 }, () => traffic.byId()));
    const intakeRows: Array<[string, LoadResult, { waits: number; ms: number; deadlocks: number }]> = [];
    for (const [name, make] of [
      ['contacts by id', traffic.byId],
      ['contacts by email', traffic.byEmail],
    ] as const) {
      progress(`intake: ${INTAKE_BATCHES} batches of ${BATCH}, ${name}`);
      const bodies = Array.from({ length: INTAKE_BATCHES }, () => make());
      const before = await lockStatus(database.admin);
      const result = await intake(server, key, bodies);
      const after = await lockStatus(database.admin);
      intakeRows.push([name, result, { waits: after.waits - before.waits, ms: after.ms - before.ms, deadlocks: after.deadlocks - before.deadlocks }]);
      const rate = result.perSecond * BATCH;
      verdicts.push({ figure: `intake, batches of ${BATCH}, ${name}, ${WAITING} runs waiting`, measured: `${fixed(rate, 0)} activities/s`, target: `>= ${TARGET_RATE}`, ok: rate >= TARGET_RATE && result.wrong === 0 });
    }
    reportIntake(intakeRows);

    // 2. From the 202 to the next step's start.
    const latency = await measureLatency(database.admin, client, account.id, cart.id, traffic);
    reportLatency(latency);
    const all = latency.groups.flatMap((group) => group.latenciesMs);
    const p99 = percentile(all, 99);
    verdicts.push({
      figure: `202 -> next step's startedAt, p99 of ${all.length} (${WAITING} runs waiting)`,
      measured: `${fixed(p99, 0)} ms`,
      target: `< ${TARGET_P99_MS} ms`,
      ok: p99 < TARGET_P99_MS && latency.missing === 0 && all.length === PROBES,
    });

    // 3. Entry by event.
    const entry = await measureEntry(server, key, database.admin, orders.id, seed);
    reportEntry(entry);
    const entryRate = entry.load.perSecond * BATCH;
    verdicts.push({ figure: `entry by event, batches of ${BATCH} (repeats, overlapping concurrent batches)`, measured: `${fixed(entryRate, 0)} activities/s`, target: `>= ${TARGET_RATE}`, ok: entryRate >= TARGET_RATE && entry.load.wrong === 0 });
    verdicts.push({ figure: '(sequence, contact) with more than one active run', measured: String(entry.duplicates), target: '0', ok: entry.duplicates === 0 });
    verdicts.push({ figure: 'runs started = contacts that had an order_placed', measured: `${entry.runs} of ${entry.contacts}`, target: `${entry.contacts}`, ok: entry.runs === entry.contacts });

    // Where a batch's time goes, when a rate misses.
    const profiles: Array<[string, BatchProfile]> = [];
    progress('profile: one batch of each kind in this process');
    try {
      profiles.push(['intake, by id', await profileBatch(database.url, database.admin, account.id, traffic.byId())]);
      profiles.push(['intake, by email', await profileBatch(database.url, database.admin, account.id, traffic.byEmail())]);
      profiles.push(['entry by event (new contacts of the pool)', await profileBatch(database.url, database.admin, account.id, entryBatch(seed, entry.nextWindow, 0))]);
    } catch (error) {
      out();
      out(`(profile stopped: ${(error as Error).message})`);
    }
    reportProfiles(profiles);
  } finally {
    await server.stop();
  }

  out();
  out('## Targets');
  out();
  out(table(['figure', 'measured', 'target', 'verdict'], verdicts.map((v) => [v.figure, v.measured, v.target, passFail(v.ok)])));
  out();
  out(`Load average (1 min): ${startedLoad} at the start, ${loadAverage()} at the end. Logs: ${logDir}`);
  await database.close();
  if (verdicts.some((v) => !v.ok)) process.exitCode = 1;
}

// The benchmark's database is its own (the engine in the service takes due runs of every
// account): dropped and created again, as bench:engine does.
async function emptyDatabase(admin: Connection, url: string) {
  const name = new URL(url).pathname.slice(1);
  if (!/^\w+$/.test(name)) throw new Error(`BENCH_DATABASE_URL: a plain database name, not ${name}`);
  await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`USE \`${name}\``);
}

async function bufferPool(admin: Connection): Promise<number> {
  const [rows] = await admin.query('SELECT @@innodb_buffer_pool_size AS b');
  return Number((rows as Array<{ b: number }>)[0]!.b) / 1048576;
}

// Traffic that moves nothing: seeded contacts at random, a page view, a product view, and a
// checkout of a cart no run waits for (it reads the contact's wait and leaves it).
function unrelatedTraffic(seed: WaitingSeed) {
  const count = seed.contacts.count;
  let serial = 0;
  const item = (contact: ActivityInput['contact']): ActivityInput => {
    serial += 1;
    const kind = serial % 3;
    if (kind === 0) return { contact, name: 'page_viewed', properties: { path: `/p/${serial % 997}`, referrer: 'newsletter' } };
    if (kind === 1) return { contact, name: 'product_viewed', properties: { sku: `SKU-${serial % 5003}`, price: 19.9 } };
    return { contact, name: 'checkout_completed', properties: { cartId: `nomatch-${serial}`, total: 42 } };
  };
  const at = () => Math.floor(Math.random() * count);
  return {
    byId: () => Array.from({ length: BATCH }, () => item({ id: idOf(seed.contacts.prefix, at()) })),
    byEmail: () => Array.from({ length: BATCH }, () => item({ email: seededEmail(seed.contacts, at()) })),
    one: () => item({ id: idOf(seed.contacts.prefix, at()) }),
  };
}

async function intake(server: RunningServer, key: string, batches: ActivityInput[][]): Promise<LoadResult> {
  const bodies = batches.map((activities) => JSON.stringify({ activities }));
  let next = 0;
  const result = await runLoad(
    {
      base: server.base,
      apiKey: key,
      method: 'POST',
      connections: Math.min(CONNECTIONS, bodies.length),
      amount: bodies.length,
      expectStatus: 202,
      next: () => ({ path: '/api/v1/activities/batch', body: bodies[next++ % bodies.length] }),
    },
    server.pid,
  );
  return result;
}

function reportIntake(rows: Array<[string, LoadResult, { waits: number; ms: number; deadlocks: number }]>) {
  out();
  out(`## 1. Intake: POST /api/v1/activities/batch, ${INTAKE_BATCHES} batches of ${BATCH} per case, ${CONNECTIONS} connections, ${WAITING} runs waiting`);
  out();
  out(
    table(
      ['contacts named', 'batches', 'activities', 'seconds', 'activities/s', 'target', 'batch p50 ms', 'batch p99 ms', 'not 202', 'service CPU ms / batch', 'row lock waits', 'lock wait ms', 'deadlocks'],
      rows.map(([name, r, locks]) => [
        name,
        String(r.ok),
        String(r.ok * BATCH),
        fixed(r.seconds, 2),
        fixed(r.perSecond * BATCH, 0),
        `>= ${TARGET_RATE}`,
        fixed(r.p50, 0),
        fixed(r.p99, 0),
        String(r.wrong),
        fixed(r.cpuMsPerRequest, 0),
        String(locks.waits),
        String(locks.ms),
        String(locks.deadlocks),
      ]),
    ),
  );
  out();
  out(
    'Each batch: seeded contacts at random (by id, or by their email: upserted, found), a third each page_viewed, product_viewed and checkout_completed ' +
      'for a cart no run waits for (the contact\'s own wait is read and left). Lock waits and deadlocks: InnoDB\'s global counters over the case (the shared server\'s other users count too).',
  );
}

interface LatencyGroup {
  name: string;
  latenciesMs: number[];
  // Statuses answered before the probe's 202 (retried).
  retried: number[];
  background?: { batches: number; activities: number; seconds: number; wrong: number; late: number };
}

// PROBES contacts, each entered into the cart sequence by a cart_abandoned (the engine begins
// their wait_for step and writes their run_waits row); then each one's checkout_completed for
// its own cart, one at a time, in four groups: alone, inside a batch of unrelated traffic, and
// both again beside a background of batches at BACKGROUND_RATE. For each: the time its 202
// arrived, against run_step_executions.started_at of step `thanks` of its run.
async function measureLatency(admin: Connection, client: Poster, accountId: string, sequenceId: string, traffic: ReturnType<typeof unrelatedTraffic>) {
  const tag = randomBytes(3).toString('hex');
  const probes = Array.from({ length: PROBES }, (_, i) => ({ email: `probe-${i}-${tag}@bench.test`, cartId: `cart-${tag}-${i}` }));
  progress(`latency: ${PROBES} probe contacts enter the cart sequence`);
  const contactIds: string[] = [];
  for (let at = 0; at < probes.length; at += BATCH) {
    const answer = await client.post('/api/v1/activities/batch', {
      activities: probes.slice(at, at + BATCH).map((p) => ({ contact: { email: p.email }, name: 'cart_abandoned', properties: { cartId: p.cartId, total: 42 } })),
    });
    if (answer.status !== 202) throw new Error(`cart_abandoned batch: ${answer.status} ${answer.body}`);
    contactIds.push(...(JSON.parse(answer.body) as { activities: Array<{ contactId: string }> }).activities.map((a) => a.contactId));
  }
  // Their waits begun (the engine ran step `checkout`).
  const waitDeadline = performance.now() + 120_000;
  let runOf = new Map<string, string>();
  for (;;) {
    const [rows] = await admin.query('SELECT w.run_id, w.contact_id FROM run_waits w WHERE w.account_id = ? AND w.contact_id IN (?)', [accountId, contactIds]);
    runOf = new Map((rows as Array<{ run_id: string; contact_id: string }>).map((row) => [row.contact_id, row.run_id]));
    if (runOf.size === contactIds.length) break;
    if (performance.now() > waitDeadline) throw new Error(`only ${runOf.size} of ${contactIds.length} probe runs are waiting after 120 s`);
    await sleep(200);
  }
  const groups: LatencyGroup[] = [];
  const perGroup = Math.ceil(PROBES / 4);
  let next = 0;
  const arrivals = new Map<string, { at: number; group: LatencyGroup }>();
  const send = async (group: LatencyGroup, inBatch: boolean) => {
    for (let i = 0; i < perGroup && next < PROBES; i += 1, next += 1) {
      const probe = probes[next]!;
      const item = { contact: { id: contactIds[next]! }, name: 'checkout_completed', properties: { cartId: probe.cartId, total: 42 } };
      // A client retries a 503 (nothing was written: the transaction rolled back); the
      // probe's time is from the 202 that stored it, and the retries are counted.
      let answer;
      for (let attempt = 1; ; attempt += 1) {
        if (inBatch) {
          const items = traffic.byId().slice(0, BATCH - 1);
          items.splice(Math.floor(Math.random() * BATCH), 0, item);
          answer = await client.post('/api/v1/activities/batch', { activities: items });
        } else {
          answer = await client.post('/api/v1/activities', item);
        }
        if (answer.status === 202) break;
        group.retried.push(answer.status);
        if (answer.status !== 503 || attempt === 5) throw new Error(`probe ${next}: ${answer.status} ${answer.body}`);
        await sleep(500);
      }
      arrivals.set(runOf.get(contactIds[next]!)!, { at: answer.arrivedAt, group });
      await sleep(100);
    }
  };
  for (const [name, inBatch, loaded] of [
    ['alone, single POST /activities', false, false],
    [`alone, inside a batch of ${BATCH} (${BATCH - 1} unrelated)`, true, false],
    [`beside ${BACKGROUND_RATE}/s of batches, single POST`, false, true],
    [`beside ${BACKGROUND_RATE}/s of batches, inside a batch of ${BATCH}`, true, true],
  ] as const) {
    const group: LatencyGroup = { name, latenciesMs: [], retried: [] };
    groups.push(group);
    progress(`latency: ${name}`);
    const background = loaded ? pacedBatches(client, traffic.byId, BACKGROUND_RATE) : undefined;
    if (background) await sleep(2_000);
    await send(group, inBatch);
    if (background) group.background = await background.stop();
  }
  // The next step's start of each probed run (polled: measurement, not product).
  const runIds = [...arrivals.keys()];
  const started = new Map<string, number>();
  const deadline = performance.now() + 60_000;
  while (started.size < runIds.length && performance.now() < deadline) {
    const [rows] = await admin.query("SELECT run_id, started_at FROM run_step_executions WHERE run_id IN (?) AND step_id = 'thanks'", [runIds]);
    for (const row of rows as Array<{ run_id: string; started_at: Date }>) started.set(row.run_id, row.started_at.getTime());
    if (started.size < runIds.length) await sleep(200);
  }
  for (const [runId, { at, group }] of arrivals) {
    const begun = started.get(runId);
    if (begun !== undefined) group.latenciesMs.push(begun - at);
  }
  const [matched] = await admin.query("SELECT status, COUNT(*) AS n FROM run_step_executions WHERE run_id IN (?) AND step_id = 'checkout' GROUP BY status", [runIds]);
  return { groups, missing: runIds.length - started.size, checkoutStatuses: matched as Array<{ status: string; n: number }> };
}

function reportLatency(r: Awaited<ReturnType<typeof measureLatency>>) {
  out();
  out(`## 2. From a matching activity's 202 to the waiting run's next step: run_step_executions.started_at of step \`thanks\` minus the 202's arrival, ${WAITING} runs waiting for other keys`);
  out();
  const row = (name: string, values: number[], retried: number[], background?: LatencyGroup['background']) => [
    name,
    String(values.length),
    fixed(percentile(values, 50), 0),
    fixed(percentile(values, 95), 0),
    fixed(percentile(values, 99), 0),
    fixed(Math.max(...values), 0),
    fixed(Math.min(...values), 0),
    `< ${TARGET_P99_MS} ms`,
    background ? `${fixed(background.activities / background.seconds, 0)}/s, ${background.late} late, ${background.wrong} not 202` : '-',
    retried.length ? retried.join(' ') : '-',
  ];
  const all = r.groups.flatMap((g) => g.latenciesMs);
  out(
    table(
      ['probes', 'n', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'min ms', 'target p99', 'background achieved', 'answered before the 202 (retried)'],
      [...r.groups.map((g) => row(g.name, g.latenciesMs, g.retried, g.background)), row('all', all, r.groups.flatMap((g) => g.retried))],
    ),
  );
  out();
  out(
    `Runs whose next step had not started 60 s after the last probe: ${r.missing}. Step \`checkout\` executions of the probed runs: ` +
      `${r.checkoutStatuses.map((s) => `${s.status} ${s.n}`).join(', ') || 'none'}. The 202's arrival is Date.now() in this process when fetch resolved (status and headers in); ` +
      'started_at is the engine\'s clock in the service, the same machine\'s. A negative value: the engine began the step before the answer reached the client. ' +
      'Probes go one at a time, 100 ms apart; each has its own contact and cart, entered by a cart_abandoned whose wait_for step the engine began.',
  );
}

// Batch k of the entry phase: the window of contacts [250k, 250k + 300) of the seeded ones,
// 500 order_placed among them (200 contacts twice, 100 once); batch k and k + 1 share 50
// contacts, and go at once over the load's connections.
function entryBatch(seed: WaitingSeed, k: number, first: number): ActivityInput[] {
  return Array.from({ length: BATCH }, (_, i) => {
    const n = first + k * 250 + ((i * 7) % 300);
    return { contact: { id: idOf(seed.contacts.prefix, n) }, name: 'order_placed', properties: { orderId: `o-${k}-${i}`, total: 10 + (i % 90) } };
  });
}

async function measureEntry(server: RunningServer, key: string, admin: Connection, sequenceId: string, seed: WaitingSeed) {
  const first = 0;
  const batches = Array.from({ length: ENTRY_BATCHES }, (_, k) => entryBatch(seed, k, first));
  const contacts = new Set(batches.flat().map((item) => item.contact.id!)).size;
  progress(`entry: ${ENTRY_BATCHES} batches of ${BATCH} order_placed over ${contacts} contacts`);
  const before = await lockStatus(admin);
  const load = await intake(server, key, batches);
  const after = await lockStatus(admin);
  const [dups] = await admin.query(
    'SELECT COUNT(*) AS n FROM (SELECT contact_id FROM sequence_runs WHERE sequence_id = ? AND active_flag = 1 GROUP BY sequence_id, contact_id HAVING COUNT(*) > 1) d',
    [sequenceId],
  );
  const [runs] = await admin.query('SELECT COUNT(*) AS n, COUNT(DISTINCT contact_id) AS c FROM sequence_runs WHERE sequence_id = ?', [sequenceId]);
  const counted = (runs as Array<{ n: number; c: number }>)[0]!;
  return {
    load,
    contacts,
    runs: Number(counted.n),
    duplicates: Number((dups as Array<{ n: number }>)[0]!.n),
    locks: { waits: after.waits - before.waits, ms: after.ms - before.ms, deadlocks: after.deadlocks - before.deadlocks },
    // The profile's batch: a window no batch of the phase touched.
    nextWindow: ENTRY_BATCHES + 2,
  };
}

function reportEntry(e: Awaited<ReturnType<typeof measureEntry>>) {
  out();
  out(`## 3. Entry by event: ${ENTRY_BATCHES} batches of ${BATCH} order_placed, ${CONNECTIONS} connections; the sequence's entry is { activity: "order_placed" } (reentry after_exit), its one step a wait of P7D`);
  out();
  out(
    table(
      ['batches', 'activities', 'seconds', 'activities/s', 'target', 'batch p50 ms', 'batch p99 ms', 'not 202', 'contacts', 'runs started', 'contacts with > 1 active run', 'row lock waits', 'lock wait ms', 'deadlocks'],
      [[
        String(e.load.ok),
        String(e.load.ok * BATCH),
        fixed(e.load.seconds, 2),
        fixed(e.load.perSecond * BATCH, 0),
        `>= ${TARGET_RATE}`,
        fixed(e.load.p50, 0),
        fixed(e.load.p99, 0),
        String(e.load.wrong),
        String(e.contacts),
        String(e.runs),
        String(e.duplicates),
        String(e.locks.waits),
        String(e.locks.ms),
        String(e.locks.deadlocks),
      ]],
    ),
  );
  out();
  out(
    'Batch k names contacts 250k to 250k + 299 of the seeded ones: 200 of them twice in the batch, 100 once, and 50 shared with batch k + 1, which runs at the same time on another connection. ' +
      '"contacts with > 1 active run": SELECT ... GROUP BY sequence_id, contact_id HAVING COUNT(*) > 1 over the active runs. "runs started": every run of the sequence (each contact once: its first run is still active).',
  );
}

function reportProfiles(profiles: Array<[string, BatchProfile]>) {
  out();
  out('## Where a batch of 500 goes: one batch of each kind by recordActivities in this process, every statement timed');
  out();
  out(table(['batch', 'ms', 'statements', 'row lock waits', 'lock wait ms'], profiles.map(([name, p]) => [name, fixed(p.ms, 0), String(p.statements), String(p.lockWaits), String(p.lockWaitMs)])));
  for (const [name, p] of profiles) {
    out();
    out(`${name}: statements by shape, most time first`);
    out();
    out(table(['count', 'ms', 'statement'], p.shapes.map(([shape, s]) => [String(s.count), fixed(s.ms, 1), shape])));
  }
}

main().catch((error) => {
  process.stderr.write(`bench:activities failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
