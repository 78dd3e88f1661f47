import type { Config } from '../../config';
import type { Database } from '../../db/database';
import type { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { SequenceEngine, type EngineMetrics } from './engine';

// The engine as the service and the worker run it: webhook steps with the dispatcher's
// timeout and address rules, and their own bounds per endpoint and account; logThrottle, the
// process's one (an outage is one line per 10 s).
export function startSequenceEngine(
  db: Database,
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookAllowInsecure' | 'webhookStepConcurrency' | 'webhookStepMaxPerSecond'>,
  logger: Logger,
  logThrottle?: LogThrottle,
  metrics?: EngineMetrics,
): SequenceEngine {
  const engine = new SequenceEngine(db, {
    logger,
    logThrottle,
    metrics,
    webhook: { timeoutMs: config.webhookTimeoutMs, allowInsecure: config.webhookAllowInsecure },
    outbound: { perTarget: config.webhookStepConcurrency, perAccountPerSecond: { webhook: config.webhookStepMaxPerSecond } },
  });
  engine.start();
  logger.info({ msg: 'sequence engine started' });
  return engine;
}
