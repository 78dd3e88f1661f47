import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { connectRedis } from '../../src/http/rate-limit/redis-client';
import { RedisSlidingLog } from '../../src/http/rate-limit/redis-sliding-log';
import { MemorySlidingLog, type SlidingLog } from '../../src/http/rate-limit/sliding-window-store';
import { silentLogger } from '../support/app';

// The rolling window across its rollover, on both logs, with a clock passed in: the same
// answers from the in-process ring and from Redis's sorted set.

const MINUTE = 60_000;
const T0 = 1_800_000_000_000;

interface Subject {
  log: SlidingLog;
  key: string;
  setNow: (ms: number) => void;
}

function rolloverCases(name: string, make: () => Promise<Subject>, cleanup: (subject: Subject) => Promise<void> = async () => undefined) {
  describe(name, () => {
    let subject: Subject;
    beforeEach(async () => {
      subject = await make();
    });
    afterEach(async () => {
      await cleanup(subject);
    });

    const hitAt = async (ms: number, limit = 3) => {
      subject.setNow(ms);
      return subject.log.hit(subject.key, MINUTE, limit);
    };

    it('lets one request in per hit that leaves the window, and all of them once the window has passed', async () => {
      await hitAt(T0);
      await hitAt(T0 + 10_000);
      await hitAt(T0 + 20_000);
      expect(await hitAt(T0 + MINUTE - 1), '1 ms before the first hit leaves').to.deep.equal({ hits: 4, oldestMs: T0 });
      expect(await hitAt(T0 + MINUTE), 'as it leaves').to.deep.equal({ hits: 3, oldestMs: T0 + 10_000 });
      expect(await hitAt(T0 + MINUTE + 1), 'the second is still in').to.deep.equal({ hits: 4, oldestMs: T0 + 10_000 });
      expect(await hitAt(T0 + 5 * MINUTE), 'long after').to.deep.equal({ hits: 1, oldestMs: T0 + 5 * MINUTE });
    });

    it('keeps the count of a steady stream at what one window holds, through many rollovers', async () => {
      // One hit every 5 s for 10 minutes under a limit of 20: a window holds 12 of them.
      const counts: number[] = [];
      const oldest: number[] = [];
      for (let i = 0; i < 120; i += 1) {
        const result = await hitAt(T0 + i * 5_000, 20);
        counts.push(result.hits);
        oldest.push(result.oldestMs - (T0 + i * 5_000));
      }
      expect(counts.slice(0, 12)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      expect(new Set(counts.slice(12))).to.deep.equal(new Set([12]));
      expect(new Set(oldest.slice(12))).to.deep.equal(new Set([-55_000]));
    });

    it('takes back the newest hit only, after rollovers too', async () => {
      for (let i = 0; i < 30; i += 1) await hitAt(T0 + i * 10_000, 10);
      // In the window at T0 + 290 s: the hits of 240 to 290 s.
      await subject.log.removeNewest(subject.key);
      expect(await hitAt(T0 + 290_000, 6)).to.deep.equal({ hits: 6, oldestMs: T0 + 240_000 });
      expect(await hitAt(T0 + 290_000, 6)).to.deep.equal({ hits: 7, oldestMs: T0 + 240_000 });
    });

    it('counts from zero after a reset', async () => {
      await hitAt(T0);
      await hitAt(T0 + 1);
      await subject.log.reset(subject.key);
      expect(await hitAt(T0 + 2)).to.deep.equal({ hits: 1, oldestMs: T0 + 2 });
    });
  });
}

describe('rate-limit window rollover', () => {
  rolloverCases('MemorySlidingLog', async () => {
    let now = T0;
    return { log: new MemorySlidingLog(MINUTE, () => now), key: 'k', setNow: (ms) => (now = ms) };
  }, async ({ log }) => {
    log.shutdown?.();
  });

  const url = process.env.TEST_REDIS_URL;
  if (url) {
    let client: Awaited<ReturnType<typeof connectRedis>>;
    before(async () => {
      client = await connectRedis(url, silentLogger);
    });
    after(() => client.destroy());
    rolloverCases(
      'RedisSlidingLog',
      async () => {
        let now = T0;
        return { log: new RedisSlidingLog(client, () => now), key: `rl:test:${randomUUID()}`, setNow: (ms) => (now = ms) };
      },
      async ({ key }) => {
        await client.sendCommand(['DEL', key]);
      },
    );
  } else {
    it('RedisSlidingLog (skipped: TEST_REDIS_URL is not set)');
  }

  it('loads the Redis script again when Redis has forgotten it (NOSCRIPT), in the same hit', async () => {
    const sent: string[] = [];
    const log = new RedisSlidingLog({
      sendCommand: async (args) => {
        sent.push(args[0]);
        if (args[0] === 'EVALSHA') throw new Error('NOSCRIPT No matching script. Please use EVAL.');
        return [1, 42];
      },
    });
    expect(await log.hit('k', MINUTE, 3)).to.deep.equal({ hits: 1, oldestMs: 42 });
    expect(sent).to.deep.equal(['EVALSHA', 'EVAL']);
  });
});
