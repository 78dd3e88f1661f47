import path from 'node:path';
import type { Config } from '../../config';
import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import type { RedisCommander } from '../../http/rate-limit/redis-sliding-log';
import type { ChannelSettings } from '../channels/channel-settings';
import type { MessageMetrics } from '../messages/message-metrics';
import { DEFAULT_SMTP_TIMEOUTS } from '../messages/smtp-transports';
import { DatabaseSendRate } from './outbound/send-rate/database-send-rate';
import { RedisSendRate } from './outbound/send-rate/redis-send-rate';
import { SequenceEngine, type EngineMetrics } from './engine';

// The engine as the service and the worker run it: webhook steps with the dispatcher's
// timeout and address rules, and their own bounds per endpoint and account; email and WhatsApp
// within each account's rate, counted in Redis when the process has it (REDIS_URL), else in
// the database; logThrottle, the process's one (an outage is one line per 10 s).
export function startSequenceEngine(
  db: Database,
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookAllowInsecure' | 'webhookStepConcurrency' | 'webhookStepMaxPerSecond' | 'dataDir' | 'smtpDataTimeoutMs' | 'activityRetentionDays'>,
  logger: Logger,
  channels: ChannelSettings,
  logThrottle?: LogThrottle,
  metrics?: EngineMetrics,
  messageMetrics?: MessageMetrics,
  redis?: RedisCommander,
): SequenceEngine {
  const engine = new SequenceEngine(db, {
    logger,
    logThrottle,
    metrics,
    messages: {
      settings: channels,
      outboxDir: path.join(config.dataDir, 'outbox'),
      metrics: messageMetrics,
      smtpTimeouts: { ...DEFAULT_SMTP_TIMEOUTS, dataMs: config.smtpDataTimeoutMs },
    },
    webhook: { timeoutMs: config.webhookTimeoutMs, allowInsecure: config.webhookAllowInsecure },
    activities: { retentionDays: config.activityRetentionDays, now: () => new Date() },
    outbound: {
      perTarget: config.webhookStepConcurrency,
      perAccountPerSecond: { webhook: config.webhookStepMaxPerSecond },
      sendRate: redis ? new RedisSendRate(redis) : new DatabaseSendRate(db),
    },
  });
  engine.start();
  logger.info({ msg: 'sequence engine started' });
  // The embedded default: no relay for accounts that set none. Said loudly, once per start.
  if (!channels.smtpUrl) {
    logger.warn(
      { outbox: path.join(config.dataDir, 'outbox') },
      'SMTP_URL is not set: emails of accounts without their own SMTP server are NOT sent; each is written as an .eml file in the outbox folder (status captured)',
    );
  }
  return engine;
}
