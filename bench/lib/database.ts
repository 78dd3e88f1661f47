import { spawnSync } from 'node:child_process';
import path from 'node:path';
import mysql, { type Connection } from 'mysql2/promise';
import { REPO } from './compile';

// The database a benchmark runs on.
// - BENCH_DATABASE_URL: that database, as it is (a fresh account keeps runs apart; nothing is
//   dropped). Global settings (the general log, the buffer pool) are only touched when asked.
// - Otherwise a throwaway MariaDB of the benchmark's own, started by scripts/ci/start-mariadb.sh
//   (MARIADB_DIR=/tmp/bench-mariadb, MARIADB_PORT=3310; as root, it installs Debian's packages if
//   missing). Its database svc_bench is dropped and created again on every run, and an admin
//   user may change global settings. The server is left running for the next run.

export interface BenchDatabase {
  url: string;
  // The benchmark's own instance: global settings are the benchmark's to change.
  own: boolean;
  // A connection to the same database, for the driver's reads, EXPLAIN and (own instance)
  // global settings. Never used while a measurement runs.
  admin: Connection;
  describe: string;
  close(): Promise<void>;
}

const OWN_DIR = process.env.MARIADB_DIR ?? '/tmp/bench-mariadb';
const OWN_PORT = process.env.MARIADB_PORT ?? '3310';
const OWN_DATABASE = 'svc_bench';
const ADMIN_USER = 'bench_admin';

export async function openBenchDatabase(): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) {
    if (!given.startsWith('mysql://')) throw new Error('BENCH_DATABASE_URL must be a mysql:// URL (MariaDB or MySQL)');
    const admin = await mysql.createConnection({ uri: given, charset: 'utf8mb4', timezone: 'Z' });
    return { url: given, own: false, admin, describe: `${await version(admin)} at ${redact(given)}`, close: () => admin.end() };
  }
  return openOwnMariadb();
}

async function openOwnMariadb(): Promise<BenchDatabase> {
  process.stderr.write(`bench: starting (or reusing) MariaDB in ${OWN_DIR} on port ${OWN_PORT}\n`);
  const started = spawnSync('bash', [path.join(REPO, 'scripts', 'ci', 'start-mariadb.sh')], {
    env: { ...process.env, MARIADB_DIR: OWN_DIR, MARIADB_PORT: OWN_PORT },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (started.status !== 0) throw new Error('scripts/ci/start-mariadb.sh failed (it must run as root; see above)');
  const scriptUrl = new URL(started.stdout.trim().split('\n').at(-1)!);
  const socket = path.join(OWN_DIR, 'mariadbd.sock');
  const rootSql = `
    DROP DATABASE IF EXISTS ${OWN_DATABASE};
    CREATE DATABASE ${OWN_DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
    GRANT ALL PRIVILEGES ON ${OWN_DATABASE}.* TO '${scriptUrl.username}'@'127.0.0.1';
    GRANT ALL PRIVILEGES ON ${OWN_DATABASE}.* TO '${scriptUrl.username}'@'localhost';
    CREATE USER IF NOT EXISTS '${ADMIN_USER}'@'127.0.0.1' IDENTIFIED BY '${ADMIN_USER}';
    GRANT ALL PRIVILEGES ON *.* TO '${ADMIN_USER}'@'127.0.0.1';
  `;
  const prepared = spawnSync('mariadb', ['--no-defaults', '--user=root', `--socket=${socket}`], {
    input: rootSql,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  if (prepared.status !== 0) throw new Error(`could not prepare database ${OWN_DATABASE} on ${socket}`);
  const url = `mysql://${scriptUrl.username}:${scriptUrl.password}@127.0.0.1:${OWN_PORT}/${OWN_DATABASE}`;
  const admin = await mysql.createConnection({
    host: '127.0.0.1',
    port: Number(OWN_PORT),
    user: ADMIN_USER,
    password: ADMIN_USER,
    database: OWN_DATABASE,
    charset: 'utf8mb4',
    timezone: 'Z',
  });
  const describe = `${await version(admin)}, the benchmark's own (${OWN_DIR}, port ${OWN_PORT}, database ${OWN_DATABASE}, dropped and created again)`;
  return { url, own: true, admin, describe, close: () => admin.end() };
}

async function version(connection: Connection): Promise<string> {
  const [rows] = await connection.query('SELECT VERSION() AS v');
  return `MariaDB/MySQL ${(rows as Array<{ v: string }>)[0].v}`;
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

// After a bulk seed InnoDB keeps working for a while: purging the seed's undo history and
// flushing its dirty pages, on the same two cores the measurement then runs on. The small
// size's seed leaves little of that, the large one's a lot, so measuring at once would charge
// the large size for the seed. Waits (at most boundSeconds) until the purge has caught up and
// under 1 % of the buffer pool is dirty; returns how long that took, for the report.
export async function waitForQuietInnodb(admin: Connection, boundSeconds = 300): Promise<{ seconds: number; quiet: boolean }> {
  const started = performance.now();
  for (;;) {
    const [rows] = await admin.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_history_list_length', 'Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_total')",
    );
    const status = Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((row) => [row.Variable_name, Number(row.Value)]));
    const quiet =
      (status.Innodb_history_list_length ?? 0) < 1_000 &&
      (status.Innodb_buffer_pool_pages_dirty ?? 0) < 0.01 * (status.Innodb_buffer_pool_pages_total ?? 0);
    const seconds = (performance.now() - started) / 1000;
    if (quiet || seconds >= boundSeconds) return { seconds, quiet };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
