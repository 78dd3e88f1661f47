import type { Database } from '../../db/database';
import { databaseNow } from '../../db/sql/clock';
import type { Timers } from '../background/timers';

// The engine's time is the database's (src/db/sql/clock.ts): each pass reads it before its
// claim, and every due time, lease end and timestamp the engine writes is counted from it, so
// that processes whose own clocks disagree still agree on whose lease is live. Between two reads
// (a webhook request that ends after its pass, the sleep until the next due time) it is carried
// forward by this process's elapsed time, which a clock's skew does not change. It never runs
// backwards: a read earlier than a time already used (the database's clock stepped back) is
// taken as that time.
export class EngineClock {
  // The database's time minus this process's, at the last read.
  private delta = 0;
  private latest = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    private readonly timers: Timers,
  ) {}

  // Reads the database's time (through the timers: a test's answer with the test's time).
  async read(): Promise<Date> {
    const read = () => databaseNow(this.db);
    const databaseTime = (await (this.timers.databaseNow ? this.timers.databaseNow(read) : read())).getTime();
    const time = Math.max(databaseTime, this.latest);
    this.delta = time - this.timers.now();
    this.latest = time;
    return new Date(time);
  }

  // The last read, carried forward. Before the first read, this process's own time, which then
  // does not hold back the first read (a process whose clock is ahead would otherwise keep its
  // own time as the database's).
  now(): Date {
    if (this.latest === Number.NEGATIVE_INFINITY) return new Date(this.timers.now());
    this.latest = Math.max(this.latest, this.timers.now() + this.delta);
    return new Date(this.latest);
  }
}
