import { loadConfig } from './config';
import { routeConsoleToLog } from './logging/console-to-log';
import { openDatabase, prepareDatabase } from './db/database';
import { createLogger, flushLogs } from './logging/logger';
import { startWebhookDispatcher, webhookSettings } from './services/webhooks/start-dispatcher';

// `npm run worker`: the webhook dispatcher alone, for services run with WEBHOOK_DISPATCHER=off.
// It does not migrate: the service does. SIGTERM/SIGINT: attempts in flight get up to
// SHUTDOWN_TIMEOUT_SECONDS (at most 10 s, one attempt's timeout) to finish, the rest are
// released for another dispatcher, then the process exits 0.
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // Libraries' own console output (Sequelize's, mysql2's) and Node's warnings: JSON lines too.
  routeConsoleToLog(logger);
  const db = openDatabase(config.databaseUrl, { logger, timeouts: config.databaseTimeouts });
  await prepareDatabase(db);
  const dispatcher = startWebhookDispatcher(db, webhookSettings(config), logger, config.webhookTimeoutMs);
  logger.info({ msg: 'worker running', pid: process.pid, database: db.dialect });
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    await dispatcher.stop(Math.min(config.shutdownTimeoutMs, 10_000));
    await db.close();
    logger.info('stopped');
    await flushLogs(logger);
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void stop(received));
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
