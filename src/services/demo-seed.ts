import path from 'node:path';
import { DataTypes } from 'sequelize';
import type { Database } from '../db/database';
import { countAccounts } from './accounts';
import { createUser } from './dashboard/users';

const SEEDER = path.resolve(__dirname, '..', '..', 'db', 'seeders', '20261121000000-demo-account.js');

interface DemoSeeder {
  up(queryInterface: unknown, types: unknown, options: { quiet: boolean }): Promise<{ accountId: string; sequenceId: string; key: string }>;
}

// Runs before the server listens, so nothing else writes at the same time.
// On the first start against an empty database, creates the demo account so that a new user
// has a key to try at once, and a dashboard user with a setup link. Returns what was created,
// or null when there were accounts already.
export const DEMO_USER_EMAIL = 'demo@example.com';

export async function seedDemoIfEmpty(db: Database) {
  if ((await countAccounts(db)) > 0) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const seeder = require(SEEDER) as DemoSeeder;
  const demo = await seeder.up(db.sequelize.getQueryInterface(), DataTypes, { quiet: true });
  const { setupToken } = await createUser(db, { accountId: demo.accountId, email: DEMO_USER_EMAIL });
  return { ...demo, userEmail: DEMO_USER_EMAIL, setupToken };
}
