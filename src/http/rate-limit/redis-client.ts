import { createClient } from 'redis';
import { LogThrottle } from '../../logging/log-throttle';
import type { Logger } from '../../logging/logger';
import { BoundedRedisClient } from './bounded-redis-client';

// Commands fail at once while Redis is away (no offline queue), so a request is answered
// (503) instead of waiting; the client keeps reconnecting in the background. While it is
// connected but silent, commands fail after a deadline (BoundedRedisClient).
export async function connectRedis(
  url: string,
  logger: Logger,
  logThrottle = new LogThrottle(),
  options: { commandTimeoutMs?: number } = {},
) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries) => Math.min(100 * 2 ** retries, 2_000) },
  });
  // It reconnects every 2 s at most while Redis is down, and fails each time: the throttle,
  // shared with the requests' 503s, keeps that to one line per 10 s.
  client.on('error', (error: Error) => {
    logThrottle.log(logger, 'error', 'redis', { err: error }, 'redis unreachable: rate limits answer 503 until it is back');
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`REDIS_URL is set but Redis did not answer within 5 s (${redacted(url)})`)), 5_000).unref(),
  );
  try {
    await Promise.race([client.connect(), timeout]);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return new BoundedRedisClient(client, logger, options.commandTimeoutMs);
}

function redacted(url: string) {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
