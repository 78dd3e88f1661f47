import { loadConfig } from '../config';
import { openDatabase, prepareDatabase } from './database';
import { migrateToLatest } from './migrator';

// `npm run db:migrate`: brings DATABASE_URL's schema up to date, as start-up does.
async function main() {
  const db = openDatabase(loadConfig().databaseUrl);
  try {
    await prepareDatabase(db);
    const applied = await migrateToLatest(db);
    process.stdout.write(`${JSON.stringify({ applied })}\n`);
  } finally {
    await db.close();
  }
}

main().catch((error) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
