import { expect } from 'chai';
import { LogThrottle } from '../../src/logging/log-throttle';
import { bufferLogger } from '../support/log-buffer';

// At most one line per cause per 10 s while something keeps failing; the next line says how
// many were left out. The clock is the test's.

describe('LogThrottle', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('writes the first line for a cause, and none more for that cause within 10 s', () => {
    const { logger, records } = bufferLogger('info');
    const throttle = new LogThrottle(10_000, clock);
    const written = [];
    for (let i = 0; i < 50; i += 1) {
      written.push(throttle.log(logger, 'error', 'database', { attempt: i }, 'database unavailable'));
      now += 199; // 50 failures over 9.95 s
    }
    expect(written.filter(Boolean)).to.have.length(1);
    expect(records()).to.have.length(1);
    expect(records()[0]).to.include({ level: 'error', msg: 'database unavailable', cause: 'database', attempt: 0 });
    expect(records()[0]).to.not.have.property('suppressed');
  });

  it('writes the next line once the window has passed, saying how many were suppressed', () => {
    const { logger, records } = bufferLogger('info');
    const throttle = new LogThrottle(10_000, clock);
    throttle.log(logger, 'error', 'redis', {}, 'redis unreachable');
    for (let i = 0; i < 7; i += 1) {
      now += 1_000;
      throttle.log(logger, 'error', 'redis', {}, 'redis unreachable');
    }
    now += 3_000; // 10 s after the first line
    throttle.log(logger, 'error', 'redis', {}, 'redis unreachable');
    now += 10_000;
    throttle.log(logger, 'error', 'redis', {}, 'redis unreachable');
    expect(records().map((r) => r.suppressed)).to.deep.equal([undefined, 7, undefined]);
  });

  it('keeps one window per cause: a Redis outage does not silence a database outage', () => {
    const { logger, records } = bufferLogger('info');
    const throttle = new LogThrottle(10_000, clock);
    for (let i = 0; i < 3; i += 1) {
      throttle.log(logger, 'error', 'redis', {}, 'redis unreachable');
      throttle.log(logger, 'warn', 'database', {}, 'readiness check failed');
      now += 100;
    }
    expect(records().map((r) => [r.cause, r.level])).to.deep.equal([
      ['redis', 'error'],
      ['database', 'warn'],
    ]);
  });
});
