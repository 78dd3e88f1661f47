import type { Server } from 'node:http';
import { createApp } from './app';
import { loadConfig } from './config';
import { openDatabase, prepareDatabase } from './db/database';
import { migrateToLatest } from './db/migrator';
import { countAccounts } from './services/accounts';
import { seedDemoIfEmpty } from './services/demo-seed';
import { connectRedis } from './http/rate-limit/redis-client';
import { RedisSlidingLog } from './http/rate-limit/redis-sliding-log';
import { startMetricsServer } from './http/metrics-server';
import { LogThrottle } from './log-throttle';
import { createLogger } from './logger';
import { createMetrics } from './metrics';

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = openDatabase(config.databaseUrl, { logger });
  await prepareDatabase(db);
  const applied = await migrateToLatest(db, logger);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');

  // The embedded database is for trying the service: it gets a demo key at once. A server
  // database gets no key nobody asked for (it would sit in production logs); its first start
  // says how to make one.
  const demo = db.dialect === 'sqlite' ? await seedDemoIfEmpty(db) : null;
  const needsFirstKey = !demo && (await countAccounts(db)) === 0;
  // With REDIS_URL, every instance counts against one shared limit. Unreachable at start-up is
  // a configuration error: the service refuses to start rather than run with a different limit.
  const logThrottle = new LogThrottle();
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger, logThrottle) : undefined;
  const rateLimitLog = redis ? new RedisSlidingLog(redis) : undefined;
  const metrics = config.metricsToken || config.metricsPort ? createMetrics(db) : undefined;
  const app = createApp({ db, config, logger, rateLimitLog, metrics, logThrottle });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const metricsServer = metrics && config.metricsPort
    ? await startMetricsServer({ metrics, port: config.metricsPort, host: config.host, token: config.metricsToken })
    : undefined;
  // msg inside the object, so that it comes before port in the line (scripts grep for both).
  logger.info({ msg: 'listening', host: config.host, port, database: db.dialect, rateLimits: redis ? 'redis' : 'memory', metricsPort: config.metricsPort });

  if (demo) printWelcome(port, demo);
  if (needsFirstKey) printFirstSteps();

  shutdownOn(['SIGTERM', 'SIGINT'], server, async () => {
    metricsServer?.close();
    await db.close();
    await redis?.close();
    logger.info('stopped');
  });
}

// Stop accepting, let in-flight requests finish, then close the pool. A second signal, or
// ten seconds, ends the process regardless.
function shutdownOn(signals: NodeJS.Signals[], server: Server, cleanup: () => Promise<void>) {
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    server.close(async () => {
      await cleanup();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  for (const signal of signals) process.on(signal, stop);
}

function printWelcome(port: number, demo: { key: string; accountId: string; sequenceId: string }) {
  const base = `http://localhost:${port}/api/v1`;
  process.stdout.write(
    [
      '',
      'First start on an empty database: created a demo account, an API key and an active sequence.',
      `  account:  ${demo.accountId}`,
      `  sequence: ${demo.sequenceId} (active)`,
      `  API key:  ${demo.key}   (shown once; only its hash is stored)`,
      '',
      'Try it:',
      `  curl -s -X POST ${base}/contacts/upsert -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' \\`,
      `    -d '{"email":"ada@example.com","firstName":"Ada","tags":["vip"]}'`,
      `  curl -s -X POST ${base}/sequences/${demo.sequenceId}/trigger -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' \\`,
      `    -d '{"contact":{"email":"ada@example.com"}}'`,
      '',
      `Docs: http://localhost:${port}/docs   More keys and accounts: npm run cli -- --help`,
      '',
    ].join('\n'),
  );
}

function printFirstSteps() {
  process.stdout.write(
    [
      '',
      'The database has no accounts yet. Create one, an API key and a sequence with the admin command line:',
      '  npm run cli -- account:create --name "My company"',
      '  npm run cli -- key:create --account <account id> --name "First integration"   (prints the key, once)',
      '  npm run cli -- sequence:create --account <account id> --name "Welcome" --status active',
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
