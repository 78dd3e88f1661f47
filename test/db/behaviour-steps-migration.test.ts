import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { schemaTables, testDb } from '../support/db';

// The migration of entry by event, wait_for and goals goes down and up again on either
// database: its two tables and its columns go, and come back.

const MIGRATION = '20261227000000-add-behaviour-steps.js';

async function columnsOf(table: string): Promise<string[]> {
  const db = testDb();
  const rows =
    db.dialect === 'sqlite'
      ? await select<{ name: string }>(db, `SELECT name FROM pragma_table_info('${table}')`, [])
      : await select<{ name: string }>(db, 'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?', [table]);
  return rows.map((row) => row.name);
}

describe('behaviour steps migration', () => {
  afterEach(async () => {
    await migrateToLatest(testDb());
  });

  it('drops run_waits, sequence_entries and the new columns on the way down, and makes them again on the way up', async () => {
    const db = testDb();
    const migrator = createMigrator(db);
    const executed = (await migrator.executed()).map((m) => m.name);
    const before = executed[executed.indexOf(MIGRATION) - 1]!;
    await migrator.down({ to: MIGRATION });
    expect((await migrator.executed()).map((m) => m.name).at(-1)).to.equal(before);
    expect(await schemaTables(db)).to.not.include.members(['run_waits']);
    expect(await schemaTables(db)).to.not.include.members(['sequence_entries']);
    expect(await columnsOf('sequences')).to.not.include.members(['entry']);
    expect(await columnsOf('sequence_runs')).to.not.include.members(['trigger_activity']);
    await migrator.up();
    expect(await schemaTables(db)).to.include.members(['run_waits', 'sequence_entries']);
    expect(await columnsOf('sequences')).to.include.members(['entry', 'entry_activity', 'goal', 'goal_activity']);
    expect(await columnsOf('sequence_runs')).to.include.members(['trigger_activity', 'waited_activity']);
  });
});
