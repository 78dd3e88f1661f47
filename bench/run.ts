import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { createApp } from '../src/app';
import { createLogger } from '../src/logger';
import { openDatabase, prepareDatabase } from '../src/db/database';
import { migrateToLatest } from '../src/db/migrator';
import { createAccount } from '../src/services/accounts';
import { createApiKey } from '../src/services/api-keys';
import { batchUpsertContacts } from '../src/services/contacts/contact-operations';
import { createSequence } from '../src/services/sequences/sequence-admin';

// `npm run bench`: the hot paths under load on loopback, figures printed, nothing asserted.
// DATABASE_URL picks the database (a fresh SQLite file by default); BENCH_SECONDS the length
// of each run.
const seconds = Number(process.env.BENCH_SECONDS ?? 5);

async function main() {
  const url = process.env.DATABASE_URL ?? `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-')), 'bench.sqlite')}`;
  const db = openDatabase(url);
  await prepareDatabase(db);
  await migrateToLatest(db);
  const account = await createAccount(db, { name: `bench ${randomUUID()}` });
  const { key } = await createApiKey(db, { accountId: account.id, name: 'bench' });
  const sequence = await createSequence(db, { accountId: account.id, name: 'bench', status: 'active' });

  const prefix = randomUUID().slice(0, 8);
  for (let chunk = 0; chunk < 10; chunk += 1) {
    const contacts = Array.from({ length: 100 }, (_, i) => ({ email: `c${chunk * 100 + i}-${prefix}@bench.test` }));
    await batchUpsertContacts(db, { accountId: account.id, contacts });
  }
  const [ids] = (await db.sequelize.query('SELECT id FROM contacts WHERE account_id = ? LIMIT 500', {
    replacements: [account.id],
  })) as [Array<{ id: string }>, unknown];

  const app = createApp({ db, config: { rateLimitPerMinute: 1e9, authFailureLimitPerMinute: 1e9 }, logger: createLogger('silent') });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  let n = 0;

  const results: string[] = [];
  const run = async (
    title: string,
    { path: route, ...options }: Partial<autocannon.Options> & { path: string },
    connections = 10,
  ) => {
    const result = await autocannon({ url: `${base}${route}`, connections, duration: seconds, headers, ...options });
    const errors = result.errors + result.non2xx;
    results.push(
      `${title.padEnd(44)} ${String(Math.round(result.requests.average)).padStart(6)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms   ${errors ? `${errors} errors` : ''}`,
    );
  };

  await run('GET /contacts/{id}', { method: 'GET', path: `/api/v1/contacts/${ids[0].id}` });
  await run('GET /contacts/by-email/{email}', { method: 'GET', path: `/api/v1/contacts/by-email/c1-${prefix}%40bench.test` });
  await run('POST /contacts/upsert (existing, merge)', {
    method: 'POST',
    path: '/api/v1/contacts/upsert',
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ email: `c${(n += 1) % 1000}-${prefix}@bench.test`, customFields: { n } }),
        }),
      },
    ],
  });
  await run('POST /contacts (new)', {
    method: 'POST',
    path: '/api/v1/contacts',
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `new-${randomUUID()}@bench.test` }) }) }],
  });
  await run('POST /contacts/batch (100 items)', {
    method: 'POST',
    path: '/api/v1/contacts/batch',
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ contacts: Array.from({ length: 100 }, () => ({ email: `b-${randomUUID()}@bench.test` })) }),
        }),
      },
    ],
  }, 4);
  await run('POST /sequences/{id}/trigger (new contact)', {
    method: 'POST',
    path: `/api/v1/sequences/${sequence.id}/trigger`,
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ contact: { email: `t-${randomUUID()}@bench.test` } }) }) }],
  });

  // Enroll of 500 ids: each call on a fresh sequence, so every id makes a run.
  const latencies: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const fresh = await createSequence(db, { accountId: account.id, name: `bench ${i}`, status: 'active' });
    const started = performance.now();
    const response = await fetch(`${base}/api/v1/sequences/${fresh.id}/enroll`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ contactIds: ids.map((row) => row.id) }),
    });
    if (response.status !== 201) throw new Error(`enroll answered ${response.status}`);
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  results.push(
    `${'POST /sequences/{id}/enroll (500 ids), 20 calls'.padEnd(44)} p50 ${latencies[9].toFixed(1)} ms   max ${latencies[19].toFixed(1)} ms`,
  );

  process.stdout.write(`\nbenchmark: ${db.dialect}, ${seconds} s per run, node ${process.version}, ${os.cpus().length} cores\n`);
  process.stdout.write(`${results.join('\n')}\n`);
  server.close();
  await db.close();
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
