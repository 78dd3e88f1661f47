import { randomUUID } from 'node:crypto';
import type { SlidingLog } from './sliding-window-store';

// The sliding log in a Redis sorted set (score = time in ms), shared by every instance.
// One Lua script per hit, so the check and the record are atomic across instances; the time
// comes from Redis itself, so instances with skewed clocks still agree.
const HIT_SCRIPT = `
local key = KEYS[1]
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, window)
  count = count + 1
else
  count = limit + 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return { count, tonumber(oldest[2]) }
`;

export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

export class RedisSlidingLog implements SlidingLog {
  readonly shared = true;

  constructor(private readonly redis: RedisCommander) {}

  async hit(key: string, windowMs: number, limit: number) {
    const reply = (await this.redis.sendCommand([
      'EVAL',
      HIT_SCRIPT,
      '1',
      key,
      String(windowMs),
      String(limit),
      randomUUID(),
    ])) as [number, number];
    return { hits: Number(reply[0]), oldestMs: Number(reply[1]) };
  }

  async removeNewest(key: string) {
    await this.redis.sendCommand(['ZPOPMAX', key]);
  }

  async reset(key: string) {
    await this.redis.sendCommand(['DEL', key]);
  }

  // For /readyz: the shared store answers.
  async ping() {
    await this.redis.sendCommand(['PING']);
  }
}
