import type { Config } from '../../config';
import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { WebhookDispatcher } from './dispatcher';
import type { WebhookSettings } from './webhook-settings';

export function webhookSettings(config: Pick<Config, 'webhookAllowInsecure'>): WebhookSettings {
  return { allowInsecure: config.webhookAllowInsecure, now: () => new Date() };
}

// logThrottle: the one the process's requests log through, so that an outage they share is
// one line per 10 s.
export function startWebhookDispatcher(
  db: Database,
  settings: WebhookSettings,
  logger: Logger,
  timeoutMs: number,
  logThrottle?: LogThrottle,
): WebhookDispatcher {
  const dispatcher = new WebhookDispatcher(db, { settings, logger, timeoutMs, logThrottle });
  dispatcher.start();
  logger.info({ msg: 'webhook dispatcher started', allowInsecure: settings.allowInsecure });
  return dispatcher;
}
