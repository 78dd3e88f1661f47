import { expect } from 'chai';
import { ServiceUnavailableError } from '../../../src/errors/app-errors';
import { LogThrottle } from '../../../src/logging/log-throttle';
import { LoopBackoff } from '../../../src/services/background/loop-backoff';
import { bufferLogger } from '../../support/log-buffer';

// The backoff a background loop (the webhook dispatcher, a sequence worker) uses while a pass
// keeps failing: bounded, reset by a pass that succeeds, logged through the process's throttle.

describe('LoopBackoff', () => {
  let now: number;
  beforeEach(() => {
    now = 1_000_000;
  });

  function backoff(options: { initialMs?: number; maxMs?: number } = {}) {
    const log = bufferLogger('info');
    const made = new LoopBackoff({ name: 'sequence worker', logger: log.logger, throttle: new LogThrottle(10_000, () => now), ...options });
    return { backoff: made, log };
  }

  const lostConnection = () => Object.assign(new Error('Connection lost: The server closed the connection.'), { parent: { code: 'PROTOCOL_CONNECTION_LOST' } });

  it('doubles the wait after each failed pass up to the bound, and starts again from the first after a success', () => {
    const { backoff: loop } = backoff({ initialMs: 100, maxMs: 1_000 });
    const waits = Array.from({ length: 7 }, () => loop.failed(lostConnection()));
    expect(waits).to.deep.equal([100, 200, 400, 800, 1_000, 1_000, 1_000]);
    expect(loop.failing).to.equal(true);
    loop.succeeded();
    expect(loop.failing).to.equal(false);
    expect(loop.failed(lostConnection())).to.equal(100);
  });

  it('stays bounded after any number of failures', () => {
    const { backoff: loop } = backoff();
    let last = 0;
    for (let i = 0; i < 2_000; i += 1) last = loop.failed(lostConnection());
    expect(last).to.equal(15_000);
  });

  it('logs under the cause a request would (database, database_busy), else under the loop\'s name, one line per cause per 10 s', () => {
    const { backoff: loop, log } = backoff();
    const deadlock = Object.assign(new Error('Deadlock found'), { parent: { errno: 1213 } });
    loop.failed(new ServiceUnavailableError('Database unavailable; retry shortly', { cause: lostConnection() }));
    loop.failed(lostConnection());
    loop.failed(new ServiceUnavailableError('Database busy; retry shortly', { cause: deadlock }));
    loop.failed(new TypeError("Cannot read properties of undefined (reading 'id')"));
    loop.failed(new TypeError("Cannot read properties of undefined (reading 'id')"));
    now += 10_000;
    loop.failed(lostConnection());
    expect(log.records().map((r) => [r.msg, r.cause, r.failedPasses, r.suppressed])).to.deep.equal([
      ['sequence worker pass failed', 'database', 1, undefined],
      ['sequence worker pass failed', 'database_busy', 3, undefined],
      ['sequence worker pass failed', 'sequence_worker', 4, undefined],
      ['sequence worker pass failed', 'database', 6, 1],
    ]);
  });

  it('says once that the loop resumed, with the number of passes that failed', () => {
    const { backoff: loop, log } = backoff();
    loop.succeeded();
    loop.failed(lostConnection());
    loop.failed(lostConnection());
    loop.succeeded();
    loop.succeeded();
    const resumed = log.records().filter((r) => r.msg === 'sequence worker resumed');
    expect(resumed.map((r) => [r.level, r.loop, r.failedPasses])).to.deep.equal([['info', 'sequence worker', 2]]);
  });
});
