import type { Config } from '../../config';
import type { Database } from '../../db/database';
import type { Logger } from '../../logging/logger';
import { WebhookDispatcher } from './dispatcher';
import type { WebhookSettings } from './webhook-settings';

export function webhookSettings(config: Pick<Config, 'webhookAllowInsecure'>): WebhookSettings {
  return { allowInsecure: config.webhookAllowInsecure, now: () => new Date() };
}

export function startWebhookDispatcher(db: Database, settings: WebhookSettings, logger: Logger, timeoutMs: number): WebhookDispatcher {
  const dispatcher = new WebhookDispatcher(db, { settings, logger, timeoutMs });
  dispatcher.start();
  logger.info({ msg: 'webhook dispatcher started', allowInsecure: settings.allowInsecure });
  return dispatcher;
}
