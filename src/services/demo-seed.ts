import path from 'node:path';
import { DataTypes } from 'sequelize';
import type { Database } from '../db/database';
import { countAccounts } from './accounts';

const SEEDER = path.resolve(__dirname, '..', '..', 'db', 'seeders', '20261121000000-demo-account.js');

interface DemoSeeder {
  up(queryInterface: unknown, types: unknown, options: { quiet: boolean }): Promise<{ accountId: string; sequenceId: string; key: string }>;
}

// Runs before the server listens, so nothing else writes at the same time.
// On the first start against an empty database, creates the demo account so that a new user
// has a key to try at once. Returns what was created, or null when there were accounts already.
export async function seedDemoIfEmpty(db: Database) {
  if ((await countAccounts(db)) > 0) return null;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const seeder = require(SEEDER) as DemoSeeder;
  return seeder.up(db.sequelize.getQueryInterface(), DataTypes, { quiet: true });
}
