import { createHash } from 'node:crypto';
import type { RedisCommander } from '../../../../http/rate-limit/redis-sliding-log';
import { windowOf, type Reservation, type SendRate } from './send-rate';

// The shared throttle in Redis: a counter per (account, channel, second), raised and capped by
// one script, so the check and the count are one atomic step across processes. Each key
// expires two seconds after its second began. The second is the engine's (the caller's
// clock), as the database's count is, so both stores and the tests agree on where a second
// begins.
const RESERVE_SCRIPT = `
local want = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local count = redis.call('INCRBY', KEYS[1], want)
if count == want then redis.call('PEXPIRE', KEYS[1], 2000) end
if count > limit then
  local over = math.min(count - limit, want)
  redis.call('DECRBY', KEYS[1], over)
  return want - over
end
return want
`;
const RESERVE_SHA = createHash('sha1').update(RESERVE_SCRIPT).digest('hex');

const RELEASE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local give = math.min(count, tonumber(ARGV[1]))
if give > 0 then redis.call('DECRBY', KEYS[1], give) end
return give
`;
const RELEASE_SHA = createHash('sha1').update(RELEASE_SCRIPT).digest('hex');

export class RedisSendRate implements SendRate {
  constructor(private readonly redis: RedisCommander) {}

  async reserve(accountId: string, channel: string, want: number, perSecond: number, nowMs: number): Promise<Reservation> {
    const { start, end } = windowOf(nowMs);
    if (want <= 0) return { granted: 0, retryAt: end };
    const granted = await this.script(RESERVE_SHA, RESERVE_SCRIPT, key(accountId, channel, start), [String(want), String(perSecond)]);
    return { granted: Math.max(0, Number(granted)), retryAt: end };
  }

  async release(accountId: string, channel: string, count: number, nowMs: number): Promise<void> {
    if (count <= 0) return;
    await this.script(RELEASE_SHA, RELEASE_SCRIPT, key(accountId, channel, windowOf(nowMs).start), [String(count)]);
  }

  // EVALSHA, and the body only after a NOSCRIPT (Redis restarted or flushed its scripts).
  private async script(sha: string, body: string, redisKey: string, args: string[]): Promise<unknown> {
    try {
      return await this.redis.sendCommand(['EVALSHA', sha, '1', redisKey, ...args]);
    } catch (error) {
      if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error;
      return this.redis.sendCommand(['EVAL', body, '1', redisKey, ...args]);
    }
  }
}

function key(accountId: string, channel: string, windowStart: number): string {
  return `send-rate:${accountId}:${channel}:${windowStart}`;
}
