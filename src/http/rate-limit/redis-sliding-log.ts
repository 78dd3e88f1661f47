import { createHash, randomBytes } from 'node:crypto';
import type { SlidingLog } from './sliding-window-store';

// The sliding log in a Redis sorted set (score = time in ms), shared by every instance.
// One Lua script per hit, so the check and the record are atomic across instances; the time
// comes from Redis itself, so instances with skewed clocks still agree (ARGV[4], a time given
// by the caller, is for a clock passed in).
//
// One round trip per hit: EVALSHA with the script's hash (the body is sent again only after a
// NOSCRIPT, when Redis restarted or its script cache was flushed). In Redis a hit costs
// O(log n) for n hits in the window (n is at most the limit; refused hits are not recorded),
// plus the expired entries it removes, each once: the exact log of MemorySlidingLog, kept in
// the same structure as before so that instances of the previous version share the counts
// during a rolling deploy.
const HIT_SCRIPT = `
local key = KEYS[1]
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
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
const HIT_SHA = createHash('sha1').update(HIT_SCRIPT).digest('hex');

export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

export class RedisSlidingLog implements SlidingLog {
  readonly shared = true;
  // Members must be unique per hit across instances: this process's random id and a counter.
  private readonly instance = randomBytes(6).toString('base64url');
  private sequence = 0;

  constructor(
    private readonly redis: RedisCommander,
    private readonly clock?: () => number,
  ) {}

  async hit(key: string, windowMs: number, limit: number) {
    this.sequence = (this.sequence + 1) % Number.MAX_SAFE_INTEGER;
    const args = [key, String(windowMs), String(limit), `${this.instance}:${this.sequence}`];
    if (this.clock) args.push(String(this.clock()));
    let reply: [number, number];
    try {
      reply = (await this.redis.sendCommand(['EVALSHA', HIT_SHA, '1', ...args])) as [number, number];
    } catch (error) {
      if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error;
      reply = (await this.redis.sendCommand(['EVAL', HIT_SCRIPT, '1', ...args])) as [number, number];
    }
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
