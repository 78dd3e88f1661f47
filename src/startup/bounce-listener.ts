import type { Config } from '../config';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { Metrics } from '../metrics/metrics';
import { startBounceListener, type BounceListener } from '../services/bounces/bounce-listener';
import type { ChannelSettings } from '../services/channels/channel-settings';

// The bounce listener of this process (the server's or the worker's), when BOUNCE_SMTP_PORT is
// set. A port already taken, or no secrets key to check tokens with, stops the start: a
// listener that is configured and absent would drop the reports without a word.
export async function startConfiguredBounceListener(
  config: Config,
  db: Database,
  channels: ChannelSettings,
  logger: Logger,
  metrics?: Metrics,
): Promise<BounceListener | undefined> {
  const { smtpPort, smtpHost, domain, unsubscribeMailbox } = config.bounces;
  if (smtpPort === undefined) return undefined;
  if (!channels.secrets) throw new Error('BOUNCE_SMTP_PORT is set but SECRETS_KEY is not: the bounce addresses\' tokens cannot be checked');
  const listener = await startBounceListener({
    db,
    host: smtpHost,
    port: smtpPort,
    key: channels.secrets.bounce,
    bounceDomain: domain,
    unsubscribeMailbox,
    logger,
    metrics: metrics?.bounces,
    messageMetrics: metrics?.messages,
    activities: { retentionDays: config.activityRetentionDays, now: () => new Date() },
  });
  logger.info({ msg: 'bounce listener', host: smtpHost, port: listener.port });
  return listener;
}
