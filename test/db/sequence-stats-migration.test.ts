import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { dropAllTables, testDb } from '../support/db';
import { insertOldContacts, migrateToJustBefore } from '../support/migrations';

// The migration that makes the analytics counters, applied to a database that already has runs
// (as an upgrade finds it): the runs waiting at each step are counted from the runs as they are;
// the daily figures start empty (docs/analytics.md, "Upgrading").

const MIGRATION = '20261223000000-create-sequence-stats.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000a1';
const SEQUENCE = '00000000-0000-4000-8000-0000000000c1';

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    await dropAllTables(testDb());
    await migrateToLatest(testDb());
  });

  it('seeds the runs waiting at each step from the active runs, and leaves the daily figures empty', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    const contacts = await insertOldContacts(db, ACCOUNT, [1, 2, 3, 4, 5].map((n) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, email: `c${n}@x.io`, minute: n })));
    const now = new Date(Date.UTC(2026, 5, 1));
    await db.sequelize.query("INSERT INTO sequences (id, account_id, name, status, created_at, updated_at) VALUES (?, ?, 'Old', 'active', ?, ?)", {
      replacements: [SEQUENCE, ACCOUNT, now, now],
    });
    const runs: Array<[string, string | null]> = [['pending', 'first'], ['running', 'first'], ['paused', 'second'], ['completed', null], ['failed', 'second']];
    for (const [i, contact] of contacts.entries()) {
      await db.sequelize.query(
        'INSERT INTO sequence_runs (id, account_id, sequence_id, contact_id, status, current_step_id, started_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        { replacements: [`00000000-0000-4000-8000-0000000001${i}0`, ACCOUNT, SEQUENCE, contact.id, runs[i]![0], runs[i]![1], now, now, now] },
      );
    }

    await createMigrator(db).up({ to: MIGRATION });

    const waiting = await select<{ step_id: string; runs: number | string }>(db, 'SELECT step_id, SUM(runs) AS runs FROM sequence_step_waiting WHERE sequence_id = ? GROUP BY step_id ORDER BY step_id', [SEQUENCE]);
    expect(waiting.map((row) => [row.step_id, Number(row.runs)])).to.deep.equal([['first', 2], ['second', 1]]);
    for (const table of ['sequence_step_days', 'sequence_days']) {
      const [{ n }] = await select<{ n: number | string }>(db, `SELECT COUNT(*) AS n FROM ${table}`, []);
      expect(Number(n), table).to.equal(0);
    }
  });
});
