import { ConnectionRefusedError } from 'sequelize';

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
