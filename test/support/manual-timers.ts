import type { Timers } from '../../src/services/background/timers';

// Timers that run only when the test says: a loop scheduled with them shows the waits it
// chose (nextWait) and moves on when the test fires the timer, its clock jumping ahead by the
// wait. Nothing waits for real.
export function manualTimers(start = 1_800_000_000_000) {
  let now = start;
  let nextId = 1;
  const pending = new Map<number, { at: number; ms: number; fn: () => void }>();
  let waiters: Array<() => void> = [];
  const timers: Timers = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      pending.set(id, { at: now + ms, ms, fn });
      const woken = waiters;
      waiters = [];
      woken.forEach((wake) => wake());
      return id;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
    // The database's clock, for the engine's claims and leases, is this one: the test moves it.
    databaseNow: async () => new Date(now),
  };
  const earliest = () => [...pending.entries()].sort(([, a], [, b]) => a.at - b.at)[0];
  return {
    timers,
    now: () => now,
    // The wait of the earliest timer set, once one is (the loop has finished a pass).
    async nextWait(): Promise<number> {
      while (pending.size === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return earliest()![1].ms;
    },
    // Moves the clock to the earliest timer and runs it.
    fire(): void {
      const next = earliest();
      if (!next) throw new Error('no timer set');
      const [id, timer] = next;
      pending.delete(id);
      now = Math.max(now, timer.at);
      timer.fn();
    },
    // Moves the clock without running any timer: a loop driven by hand (runOnce) sees the time.
    advance(ms: number): void {
      now += ms;
    },
  };
}
