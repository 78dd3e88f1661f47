// The clock and timers a background loop schedules itself with. Passed in, so that a test can
// move time by hand and see the waits a loop chose, without waiting them.
export type TimerHandle = unknown;

export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  // The database's time, for a loop that goes by it (the sequence engine's leases and due
  // times): `read` reads it (src/db/sql/clock.ts). Absent, the loop calls `read`; a test's
  // timers answer with the test's own time instead.
  databaseNow?(read: () => Promise<Date>): Promise<Date>;
}

export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};
