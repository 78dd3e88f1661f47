import { ConnectionRefusedError } from 'sequelize';
import { withFailingStatements } from './db';
import type { manualTimers } from './manual-timers';

// What a background loop meets while its database is down, for withFailingStatements.
export const refused = () => new ConnectionRefusedError(new Error('connect ECONNREFUSED 10.0.0.1:3306'));

// Waits (for real, briefly) until check() holds: for work a loop does on its own once a test
// has fired its timer.
export async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Starts a loop while every statement is refused, and fires its timers until outageMs of the
// test's clock have passed: when each pass ran (ms from the start) and the wait it chose after.
export async function passesDuringOutage(
  clock: ReturnType<typeof manualTimers>,
  start: () => void,
  outageMs: number,
): Promise<{ passesAt: number[]; waits: number[] }> {
  const begin = clock.now();
  const passesAt: number[] = [];
  const waits: number[] = [];
  await withFailingStatements({ scope: 'all', failure: refused }, async () => {
    start();
    for (;;) {
      passesAt.push(clock.now() - begin);
      const wait = await clock.nextWait();
      waits.push(wait);
      if (clock.now() - begin + wait > outageMs) break;
      clock.fire();
    }
  });
  return { passesAt, waits };
}
