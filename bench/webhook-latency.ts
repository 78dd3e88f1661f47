import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, prepareDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import { withTransaction } from '../src/db/sql/transaction';
import { createLogger } from '../src/logging/logger';
import { createAccount } from '../src/services/accounts';
import { recordEvents } from '../src/services/events/record-events';
import { WebhookDispatcher } from '../src/services/webhooks/dispatcher';
import { createWebhook } from '../src/services/webhooks/endpoints';
import { startReceiver } from '../test/support/webhook-receiver';

// `npm run bench:webhooks`: the dispatcher as the service runs it (defaults: poll 250 ms,
// 32 attempts in flight, 4 per endpoint) against a local receiver answering 204.
// 1. Throughput: BENCH_WEBHOOK_EVENTS events committed up front (batches of 100, 100
//    contacts), then the time until the receiver has every one: events dispatched per second.
// 2. Latency: BENCH_WEBHOOK_SAMPLES single-event commits, 20 ms apart, dispatcher running;
//    commit (the transaction's return) to receipt, p50 and p99.
// DATABASE_URL picks the database (a fresh SQLite file by default; a MySQL database is emptied of
// nothing: use a scratch one).

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_WEBHOOK_SAMPLES ?? 300);

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webhooks-'));
  const url = process.env.DATABASE_URL || `sqlite:${path.join(dir, 'bench.sqlite')}`;
  const db = openDatabase(url);
  await prepareDatabase(db);
  await migrateToLatest(db);
  const settings = { allowInsecure: true, now: () => new Date() };
  const arrived = new Map<string, number>();
  const receiver = await startReceiver((request) => {
    arrived.set(String(request.headers['webhook-id']), performance.now());
    return 204;
  });
  const account = await createAccount(db, { name: `bench ${Date.now()}`, maxActiveRuns: null });
  await createWebhook(db, { accountId: account.id, url: receiver.url }, settings);
  const record = (events: Array<{ type: string; data: unknown }>) => withTransaction(db, (t) => recordEvents(db, t, account.id, events));

  for (let batch = 0; batch < EVENTS / 100; batch += 1) {
    await record(Array.from({ length: 100 }, (_, i) => ({ type: 'run.created', data: { run: { id: `${batch}-${i}`, contactId: `c-${i}` } } })));
  }
  const dispatcher = new WebhookDispatcher(db, { settings, logger: createLogger('silent') });
  const started = performance.now();
  dispatcher.start();
  while (arrived.size < EVENTS) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - started) / 1000;

  const committed = new Map<string, number>();
  for (let i = 0; i < SAMPLES; i += 1) {
    const [event] = await record([{ type: 'contact.updated', data: { contact: { id: `l-${i % 50}` }, changedFields: ['firstName'] } }]);
    committed.set(event!.id, performance.now());
    await new Promise((r) => setTimeout(r, 20));
  }
  while (arrived.size < EVENTS + SAMPLES) await new Promise((r) => setTimeout(r, 5));
  const latencies = [...committed].map(([id, at]) => arrived.get(id)! - at).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);

  process.stdout.write(
    [
      `database: ${db.dialect}   machine: ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}`,
      `throughput: ${EVENTS} events in ${seconds.toFixed(2)} s = ${(EVENTS / seconds).toFixed(0)} events/s dispatched`,
      `latency commit -> receipt over ${SAMPLES} events: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${latencies[latencies.length - 1]!.toFixed(1)} ms`,
      '',
    ].join('\n'),
  );
  await dispatcher.stop(1_000);
  await receiver.close();
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
