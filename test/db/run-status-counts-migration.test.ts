import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { dropAllTables, testDb } from '../support/db';
import { insertOldContacts, migrateToJustBefore } from '../support/migrations';

// The migrations that make the run status counters and the sequences' active-run counters,
// applied to a database that already has runs (as an upgrade finds it): the counters start at
// the table's own counts.

const MIGRATION = '20261211000200-create-run-status-counts.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000a1';
const SEQUENCE = '00000000-0000-4000-8000-0000000000c1';

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    await dropAllTables(testDb());
    await migrateToLatest(testDb());
  });

  it('starts the counters at the runs the table holds, by status and by sequence', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    const contacts = await insertOldContacts(db, ACCOUNT, [1, 2, 3, 4, 5].map((n) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, email: `c${n}@x.io`, minute: n })));
    const now = new Date(Date.UTC(2026, 5, 1));
    await db.sequelize.query("INSERT INTO sequences (id, account_id, name, status, created_at, updated_at) VALUES (?, ?, 'Old', 'active', ?, ?)", {
      replacements: [SEQUENCE, ACCOUNT, now, now],
    });
    const statuses = ['pending', 'running', 'completed', 'completed', 'cancelled'];
    for (const [i, contact] of contacts.entries()) {
      await db.sequelize.query(
        'INSERT INTO sequence_runs (id, account_id, sequence_id, contact_id, status, started_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        { replacements: [`00000000-0000-4000-8000-0000000001${i}0`, ACCOUNT, SEQUENCE, contact.id, statuses[i], now, now, now] },
      );
    }

    await createMigrator(db).up({ to: '20261211000500-create-sequence-active-runs.js' });

    // (Read as the tables stand: the readers first apply the run log, a later migration's table.)
    const counts = await select<{ status: string; runs: number | string }>(db, 'SELECT status, SUM(runs) AS runs FROM run_status_counts GROUP BY status', []);
    expect(Object.fromEntries(counts.map((row) => [row.status, Number(row.runs)]))).to.deep.equal({ pending: 1, running: 1, paused: 0, completed: 2, failed: 0, cancelled: 1 });
    const [{ n }] = await select<{ n: number | string }>(db, 'SELECT COUNT(*) AS n FROM run_status_counts', []);
    expect(Number(n)).to.equal(6 * 16);
    const [{ runs }] = await select<{ runs: number | string }>(db, 'SELECT SUM(runs) AS runs FROM sequence_active_runs WHERE sequence_id = ?', [SEQUENCE]);
    expect(Number(runs)).to.equal(2);
  });
});
