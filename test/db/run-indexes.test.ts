import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { enrollmentStatus } from '../../src/services/sequences/enrollment-status';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { unenroll } from '../../src/services/sequences/unenroll';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';

// The secondary indexes of sequence_runs, run_step_executions and the outbox are the ones some
// statement reads, or a constraint needs (docs/architecture.md "The indexes of sequence_runs";
// MariaDB's plans: npm run bench:run-indexes). The rest were dropped by 20261211000400-drop-unused-run-indexes.js.

const MIGRATION = '20261211000400-drop-unused-run-indexes.js';

// The same on both databases (one_active and the active lists are partial indexes on SQLite,
// over the generated active_flag on MariaDB).
const EXPECTED: Record<string, string[]> = {
  sequence_runs: [
    'sequence_runs_account_active',
    'sequence_runs_account_due',
    'sequence_runs_completed',
    'sequence_runs_contact_created',
    'sequence_runs_due',
    'sequence_runs_one_active',
    'sequence_runs_position',
    // conversions in the stats (20261227000200-add-conversion-stats-indexes.js)
    'sequence_runs_reason_completed',
    'sequence_runs_sequence_active_created',
    'sequence_runs_sequence_created',
    'sequence_runs_sequence_status_created',
  ],
  // one_success: no statement reads it; it refuses a second succeeded execution of one visit
  // (20261216000000-create-outbox.js).
  // account_step: the stats' split and wait_for figures (20261227000200-add-conversion-stats-indexes.js).
  run_step_executions: ['run_step_executions_account_step', 'run_step_executions_one_success', 'run_step_executions_unique'],
  outbox: ['outbox_due', 'outbox_idempotency_id', 'outbox_run_visit'],
};

async function secondaryIndexes(table: string): Promise<string[]> {
  const db = testDb();
  const rows =
    db.dialect === 'sqlite'
      ? await select<{ name: string }>(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_autoindex%'", [table])
      : await select<{ name: string }>(
          db,
          "SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME <> 'PRIMARY'",
          [table],
        );
  return rows.map((row) => row.name).sort();
}

describe('the indexes of sequence_runs and run_step_executions', () => {
  it('are the ones a statement reads, no more', async () => {
    for (const [table, indexes] of Object.entries(EXPECTED)) expect(await secondaryIndexes(table), table).to.deep.equal(indexes);
  });

  it('a contact\'s latest run in a sequence, and its deletion, read an index (SQLite\'s plans)', async function () {
    if (testDb().dialect !== 'sqlite') this.skip();
    const plan = async (sql: string) => (await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${sql}`, ['a', 'b'])).map((row) => row.detail).join(' | ');
    expect(await plan('SELECT id FROM sequence_runs WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1')).to.match(
      /^SEARCH sequence_runs USING INDEX sequence_runs_contact_created \(contact_id=\?\)$/,
    );
    expect(await plan('SELECT status FROM sequence_runs WHERE contact_id = ? AND ? IS NOT NULL')).to.match(/^SEARCH sequence_runs USING (COVERING )?INDEX sequence_runs_contact_created \(contact_id=\?\)$/);
  });

  it('down puts them back and up drops them again, the runs and the latest-run answer unchanged', async function () {
    this.timeout(60_000);
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contact = await buildContact(accountId);
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contact.id] });
    await unenroll(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contact.id] });
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [contact.id] });
    const before = await enrollmentStatus(testDb(), { accountId, sequenceId: sequence.id, contactId: contact.id });
    try {
      await createMigrator(testDb()).down({ to: MIGRATION });
      expect(await secondaryIndexes('sequence_runs')).to.include('sequence_runs_latest');
      expect(await enrollmentStatus(testDb(), { accountId, sequenceId: sequence.id, contactId: contact.id })).to.deep.equal(before);
    } finally {
      await migrateToLatest(testDb());
    }
    expect(await secondaryIndexes('sequence_runs')).to.not.include('sequence_runs_latest');
    expect(before.enrolled).to.equal(true);
    expect(await enrollmentStatus(testDb(), { accountId, sequenceId: sequence.id, contactId: contact.id })).to.deep.equal(before);
  });
});
