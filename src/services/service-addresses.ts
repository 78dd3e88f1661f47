import type { Database } from '../db/database';
import { select, upsertRows } from '../db/sql/statements';
import { withTransaction } from '../db/sql/transaction';

// The address the last start of the service printed (when PUBLIC_BASE_URL was unset), so that
// the admin command line's links follow the port the service really listens on, whatever PORT
// the shell that runs the command line has.

const LOCAL_BASE_URL = 'local_base_url';

export async function recordLocalBaseUrl(db: Database, url: string, now = new Date()): Promise<void> {
  await withTransaction(db, (transaction) =>
    upsertRows(db, 'service_addresses', ['name', 'url', 'updated_at'], [[LOCAL_BASE_URL, url, now]], ['name'], ['url', 'updated_at'], transaction),
  );
}

export async function lastLocalBaseUrl(db: Database): Promise<string | undefined> {
  const [row] = await select<{ url: string }>(db, 'SELECT url FROM service_addresses WHERE name = ?', [LOCAL_BASE_URL]);
  return row?.url;
}
