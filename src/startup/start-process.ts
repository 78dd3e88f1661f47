import { loadConfig, type Config } from '../config';
import { openDatabase, prepareDatabase, type Database } from '../db/database';
import { routeConsoleToLog } from '../logging/console-to-log';
import { createLogger, type Logger } from '../logging/logger';
import type { ChannelSettings } from '../services/channels/channel-settings';
import { channelSettingsFrom, findSecretsKey } from './channel-settings';
import { checkSendingSetup } from './sending-checks';

// What every process of the service does first, the server and the worker alike: read the
// environment once, start the JSON log, send libraries' own console output (Sequelize's,
// mysql2's) and Node's warnings into it, open the database, and find the secrets key (made on
// the embedded default's first start). It refuses to start when emails would leave with
// unsubscribe links nobody can reach (sending-checks.ts).
export async function startProcess(): Promise<{ config: Config; logger: Logger; db: Database; channels: ChannelSettings; sendingWarning: string | null }> {
  const config = loadConfig();
  // Before anything opens: a start that would send emails with unreachable links refuses.
  const { warning: sendingWarning } = checkSendingSetup(config);
  const logger = createLogger(config.logLevel);
  routeConsoleToLog(logger);
  const db = openDatabase(config.databaseUrl, { logger, timeouts: config.databaseTimeouts });
  await prepareDatabase(db);
  const channels = channelSettingsFrom(config, findSecretsKey(config, logger));
  return { config, logger, db, channels, sendingWarning };
}
