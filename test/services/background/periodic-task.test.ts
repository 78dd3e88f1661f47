import { expect } from 'chai';
import { PeriodicTask } from '../../../src/services/background/periodic-task';
import { silentLogger } from '../../support/app';
import { manualTimers } from '../../support/manual-timers';

// The maintenance tasks' schedule: the interval when idle, at once while work is left or when
// woken (also during a pass), the backoff while the database fails.

describe('PeriodicTask', () => {
  it('waits its interval when idle, comes back at once while work is left, and backs off on failures', async () => {
    const clock = manualTimers();
    const answers: Array<boolean | Error> = [true, false, new Error('database down'), new Error('database down'), false];
    const seen: number[] = [];
    const task = new PeriodicTask({
      name: 'test task',
      logger: silentLogger,
      timers: clock.timers,
      intervalMs: 5_000,
      backoff: { initialMs: 100, maxMs: 1_000 },
      async pass(now) {
        seen.push(now.getTime());
        const answer = answers.shift()!;
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
    task.start();
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      waits.push(await clock.nextWait());
      clock.fire();
    }
    waits.push(await clock.nextWait());
    expect(waits).to.deep.equal([5_000, 0, 5_000, 100, 200, 5_000]);
    expect(seen).to.have.length(5);
    await task.stop();
  });

  it('a wake during a pass brings the next pass at once', async () => {
    const clock = manualTimers();
    let release!: () => void;
    let passes = 0;
    const task = new PeriodicTask({
      name: 'test task',
      logger: silentLogger,
      timers: clock.timers,
      intervalMs: 5_000,
      async pass() {
        passes += 1;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
        return false;
      },
    });
    task.start();
    await clock.nextWait();
    clock.fire();
    task.wake();
    release();
    expect(await clock.nextWait()).to.equal(0);
    clock.fire();
    expect(await clock.nextWait()).to.equal(5_000);
    expect(passes).to.equal(2);
    await task.stop();
  });

  it('with a wake linger, takes the wakes of one linger in one pass, and lingers again after a pass that was woken', async () => {
    const clock = manualTimers();
    let release!: () => void;
    let passes = 0;
    const task = new PeriodicTask({
      name: 'test task',
      logger: silentLogger,
      timers: clock.timers,
      intervalMs: 5_000,
      wakeLingerMs: 25,
      async pass() {
        passes += 1;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
        return false;
      },
    });
    task.start();
    expect(await clock.nextWait()).to.equal(5_000);
    // Three commits in a row: one pass, 25 ms after the first.
    task.wake();
    clock.advance(10);
    task.wake();
    task.wake();
    expect(await clock.nextWait()).to.equal(25);
    clock.fire();
    // Woken during its pass: the next pass lingers too, instead of coming at once.
    task.wake();
    release();
    expect(await clock.nextWait()).to.equal(25);
    clock.fire();
    expect(await clock.nextWait()).to.equal(5_000);
    expect(passes).to.equal(2);
    await task.stop();
  });
});
