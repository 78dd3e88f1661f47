import type * as RedisClientModule from './http/rate-limit/redis-client';
import { LogThrottle } from './logging/log-throttle';
import { flushLogs } from './logging/logger';
import { startProcess } from './startup/start-process';
import { startWebhookDispatcher, webhookSettings } from './services/webhooks/start-dispatcher';
import { startSequenceEngine } from './services/engine/start-engine';
import { startMaintenance } from './services/maintenance/start-maintenance';
import { startConfiguredBounceListener } from './startup/bounce-listener';
import { whereBouncesGo } from './startup/where-bounces-go';

// `npm run worker`: the webhook dispatcher, the sequence engine and the maintenance tasks
// (src/services/maintenance: run releases, run history), without the API: for
// services run with WEBHOOK_DISPATCHER=off or SEQUENCE_ENGINE=off, or beside them for more
// throughput. It does not migrate: the service does. SIGTERM/SIGINT: requests in flight get up
// to SHUTDOWN_TIMEOUT_SECONDS (at most 10 s, one attempt's timeout) to finish, the rest are
// handed back for another process, then the process exits 0.
async function main() {
  const { config, logger, db, channels, sendingWarning } = await startProcess();
  if (sendingWarning) logger.warn(sendingWarning.trim());
  const logThrottle = new LogThrottle();
  // With REDIS_URL, the email and WhatsApp throttle counts there, as the service's does (its
  // client loads only when configured).
  const redis = config.redisUrl
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports
      await (require('./http/rate-limit/redis-client') as typeof RedisClientModule).connectRedis(config.redisUrl, logger, logThrottle)
    : undefined;
  const dispatcher = startWebhookDispatcher(db, webhookSettings(config), logger, config.webhookTimeoutMs);
  const engine = startSequenceEngine(db, config, logger, channels, logThrottle, undefined, undefined, redis);
  const maintenance = startMaintenance(db, config, logger);
  // The bounce listener, when BOUNCE_SMTP_PORT is set (docs/channels.md).
  const bounceListener = await startConfiguredBounceListener(config, db, channels, logger);
  logger.info({ msg: 'worker running', pid: process.pid, database: db.dialect, bounces: whereBouncesGo(config.bounces, bounceListener?.address ?? null).map((line) => line.trim()) });
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const bound = Math.min(config.shutdownTimeoutMs, 10_000);
    await Promise.all([dispatcher.stop(bound), engine.stop(bound), maintenance.stop(), bounceListener?.close()]);
    await db.close();
    await redis?.close();
    logger.info('stopped');
    await flushLogs(logger);
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void stop(received));
}

main().catch((error) => {
  // A refusal says why in its message; its stack would say nothing more.
  const refusal = (error as { startRefusal?: boolean }).startRefusal === true;
  process.stderr.write(refusal ? `${(error as Error).message}\n` : `Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
