import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { createServer } from 'node:http';
import { createApp } from './app';
import { SmtpTransports } from './services/messages/smtp-transports';
import { migrateToLatest } from './db/migrator';
import { countAccounts } from './services/accounts';
import { setupUrl } from './services/dashboard/users';
import { seedDemoIfEmpty } from './services/demo-seed';
import { recordLocalBaseUrl } from './services/service-addresses';
import type * as RedisClientModule from './http/rate-limit/redis-client';
import { RedisSlidingLog } from './http/rate-limit/redis-sliding-log';
import { DrainableServer } from './http/graceful-shutdown';
import { startMetricsServer } from './metrics/metrics-server';
import { applyServerTimeouts } from './http/server-timeouts';
import { LogThrottle } from './logging/log-throttle';
import { flushLogs, type Logger } from './logging/logger';
import type * as MetricsModule from './metrics/metrics';
import { DEFAULT_EVENT_RETENTION, EventRetention } from './services/events/event-retention';
import { startProcess } from './startup/start-process';
import { startWebhookDispatcher, webhookSettings } from './services/webhooks/start-dispatcher';
import { startSequenceEngine } from './services/engine/start-engine';
import { startMaintenance } from './services/maintenance/start-maintenance';
import { importsDir } from './services/imports/imports-dir';
import { localBaseUrl, whereServing } from './startup/where-serving';
import { startConfiguredBounceListener } from './startup/bounce-listener';
import { whereBouncesGo } from './startup/where-bounces-go';
import { whereEmailsGo } from './startup/where-emails-go';

// The old generation may grow by at most half between full collections, where V8's own factor
// goes up to 4 on a machine with room: under load the process then carries less garbage (RSS
// after a GET load 136 MiB instead of 169 here) for no CPU that measures (0.538 against 0.531
// ms per GET). Set at start, before the heap grows (issue 8's memory target).
setFlagsFromString('--heap-growing-percent=50');

async function main() {
  const { config, logger, db, channels, sendingWarning } = await startProcess();
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
  // The Redis client and prom-client (some 700 modules together) load only when configured.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const redis = config.redisUrl
    ? await (require('./http/rate-limit/redis-client') as typeof RedisClientModule).connectRedis(config.redisUrl, logger, logThrottle)
    : undefined;
  const rateLimitLog = redis ? new RedisSlidingLog(redis) : undefined;
  const metrics =
    config.metricsToken || config.metricsPort ? (require('./metrics/metrics') as typeof MetricsModule).createMetrics(db) : undefined;
  /* eslint-enable @typescript-eslint/no-require-imports */
  // The server exists before the app so that the app's /readyz can read its shutdown state.
  const server = createServer();
  applyServerTimeouts(server, config.httpTimeouts);
  const drainable = new DrainableServer(server);
  const webhooks = webhookSettings(config);
  // The message editor's test sends: their own relay pool, closed at shutdown.
  const testSmtp = new SmtpTransports(undefined, channels);
  server.on('request', createApp({ db, config, logger, rateLimitLog, lifecycle: drainable, metrics, logThrottle, webhooks, channels, activities: { retentionDays: config.activityRetentionDays, now: () => new Date() }, testSends: { transports: testSmtp, outboxDir: path.join(config.dataDir, 'outbox') }, imports: { dir: importsDir(config.dataDir) } }));
  server.listen(config.port, config.host);
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
  logger.info({
    msg: 'listening',
    host: config.host,
    port,
    pid: process.pid,
    database: db.dialect,
    rateLimits: redis ? 'redis' : 'memory',
    metricsPort: config.metricsPort,
  });
  // Now, not at the next periodic flush: scripts and orchestrators wait for this line.
  logger.flush();

  const eventRetention = new EventRetention(db, { ...DEFAULT_EVENT_RETENTION, retentionDays: config.eventRetentionDays }, logger);
  eventRetention.start();
  const maintenance = startMaintenance(db, config, logger, logThrottle, metrics && { projection: metrics.projection });
  // WEBHOOK_DISPATCHER=off: a separate `npm run worker` delivers instead.
  const dispatcher = config.webhookDispatcher ? startWebhookDispatcher(db, webhooks, logger, config.webhookTimeoutMs, logThrottle) : undefined;
  // SEQUENCE_ENGINE=off: runs move only where a worker runs the engine.
  const engine = config.sequenceEngine ? startSequenceEngine(db, config, logger, channels, logThrottle, metrics?.engine, metrics && { ...metrics.messages, whatsapp: metrics.whatsapp }, redis) : undefined;
  const bounceListener = await startConfiguredBounceListener(config, db, channels, logger, metrics);

  const local = localBaseUrl(config.host, port);
  const publicBase = config.publicOrigin ? config.publicBaseUrl : local;
  // The admin command line's links (user:setup-link) follow this start's port.
  if (!config.publicOrigin) await recordLocalBaseUrl(db, local);
  process.stdout.write(whereServing(publicBase, config.host));
  if (config.webhookAllowInsecure) {
    process.stdout.write(
      '  Webhooks may call http:// and this machine\'s or network\'s addresses (WEBHOOK_ALLOW_INSECURE; the embedded database\'s default, for trying it locally)\n',
    );
  }
  // Captured to files (the embedded default) or through SMTP_URL's relay: said where a newcomer looks.
  const emails = whereEmailsGo({ smtpUrl: channels.smtpUrl, smtpUrlCaptures: config.channels.smtpUrlCaptures, dataDir: config.dataDir, engineRuns: config.sequenceEngine });
  if (emails) process.stdout.write(`${emails}\n`);
  // Where late bounces and complaints go (docs/channels.md "The bounce domain and the listener").
  process.stdout.write(`${whereBouncesGo(config.bounces, bounceListener?.address ?? null).join('\n')}\n`);
  if (sendingWarning) process.stdout.write(sendingWarning);
  if (demo) printWelcome(local, demo, publicBase);
  if (needsFirstKey) printFirstSteps();

  stopOnSignals(drainable, {
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    // Only once no request can use them any more.
    release: async () => {
      metricsServer?.close();
      // No new reports; a report being read finishes, or its sender tries again.
      await bounceListener?.close();
      // Attempts in flight get 3 s to finish; the rest are released for another dispatcher.
      await dispatcher?.stop(3_000);
      await engine?.stop(3_000);
      testSmtp.close();
      await eventRetention.stop();
      await maintenance.stop();
      await db.close();
      await redis?.close();
    },
  });
}

interface StopOptions {
  timeoutMs: number;
  logger: Logger;
  release: () => Promise<void>;
}

// SIGTERM or SIGINT: /readyz turns 503, new connections are refused, requests in progress run
// to completion (up to timeoutMs), then the database pool and Redis close and the process
// exits 0. Past the timeout, or on a second signal a second or more after the first, the
// requests still running are cut off and the exit code is 1. (A signal repeated within the
// second is the same request: npm relays to the server the SIGINT a terminal's Ctrl-C has
// already sent it.)
function stopOnSignals(drainable: DrainableServer, { timeoutMs, logger, release }: StopOptions) {
  let firstSignalAt: number | undefined;
  const stop = async (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (firstSignalAt !== undefined) {
      if (now - firstSignalAt < 1_000) return;
      logger.warn({ signal, inFlight: drainable.inFlight }, 'second signal: stopping now');
      drainable.destroyAll();
      await flushLogs(logger);
      process.exit(1);
    }
    firstSignalAt = now;
    logger.info({ signal, inFlight: drainable.inFlight, timeoutMs }, 'stopping');
    const drained = await drainable.drain({ timeoutMs });
    if (!drained) {
      logger.error({ inFlight: drainable.inFlight }, 'shutdown timed out: closing the connections still in progress');
      drainable.destroyAll();
    }
    let exitCode = drained ? 0 : 1;
    try {
      // A frozen database must not hold the process forever either.
      await withTimeout(release(), 5_000, 'closing the database and Redis took over 5 s');
    } catch (error) {
      logger.error({ err: error }, 'closing the database or Redis failed');
      exitCode = 1;
    }
    logger.info({ exitCode, ms: Date.now() - now }, 'stopped');
    await flushLogs(logger);
    process.exit(exitCode);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void stop(received));
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function printWelcome(
  local: string,
  demo: { key: string; accountId: string; sequenceId: string; userEmail: string; setupToken: string },
  baseUrl: string,
) {
  const base = `${local}/api/v1`;
  process.stdout.write(
    [
      '',
      'First start on an empty database: created a demo account, an API key and an active sequence.',
      `  account:  ${demo.accountId}`,
      `  sequence: ${demo.sequenceId} (active): waits 30 s, then tags the contact "welcomed"`,
      `  API key:  ${demo.key}   (shown once; only its hash is stored)`,
      `  Dashboard user ${demo.userEmail}: set a password at (one use, 24 h)`,
      `    ${setupUrl(baseUrl, demo.setupToken)}`,
      '',
      'Try it:',
      `  curl -s -X POST ${base}/contacts/upsert -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' \\`,
      `    -d '{"email":"ada@example.com","firstName":"Ada","tags":["vip"]}'`,
      `  curl -s -X POST ${base}/sequences/${demo.sequenceId}/trigger -H 'x-api-key: ${demo.key}' -H 'content-type: application/json' \\`,
      `    -d '{"contact":{"email":"ada@example.com"}}'`,
      `  curl -s ${base}/sequences/${demo.sequenceId}/runs -H 'x-api-key: ${demo.key}'   # the run: pending, running, completed`,
      '',
      'More keys, accounts and dashboard users: npm run -s cli -- --help',
      'Lost this key or link later? account:list, key:create, user:list and user:setup-link make new ones',
      '  (docs/operations.md, "Admin command line").',
      '',
    ].join('\n'),
  );
}

function printFirstSteps() {
  process.stdout.write(
    [
      '',
      'The database has no accounts yet. Create one, an API key and a sequence with the admin command line:',
      '  npm run -s cli -- account:create --name "My company"',
      '  npm run -s cli -- key:create --account <account id> --name "First integration"   (prints the key, once)',
      '  npm run -s cli -- sequence:create --account <account id> --name "Welcome" --status active',
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  // A refusal says why in its message; its stack would say nothing more.
  const refusal = (error as { startRefusal?: boolean }).startRefusal === true;
  process.stderr.write(refusal ? `${(error as Error).message}\n` : `Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
