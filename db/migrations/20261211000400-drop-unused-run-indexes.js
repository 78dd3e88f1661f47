'use strict';

// Fewer indexes to write (issue 27, 9): every secondary index of sequence_runs and
// run_step_executions was checked against the statements the service sends, by EXPLAIN on
// MariaDB over 300,000 runs (`npm run bench:run-indexes`; the list, with the statement that
// reads each index that stays, is in docs/architecture.md "The indexes of sequence_runs").
// Dropped, as no statement reads them:
// - sequence_runs_latest (sequence_id, contact_id, created_at, id): the latest run of a contact
//   in a sequence is read through sequence_runs_one_active (contact_id, sequence_id, ...) on
//   MariaDB, and sequence_runs_contact_created (contact_id, created_at, id) on SQLite, which
//   hold the same rows (one contact's runs in one sequence: a handful);
// - SQLite's sequence_runs_contact_id (contact_id), made for the contact's delete cascade,
//   which sequence_runs_contact_created serves since 20261202000000;
// - MariaDB's run_step_executions.account_id, the index InnoDB made for the foreign key to
//   accounts, with that key: no statement reads executions by account, and an account's
//   executions go with its runs (run_id's key cascades). SQLite's key has no index and stays.

async function foreignKeyOn(queryInterface, table, column) {
  const [rows] = await queryInterface.sequelize.query(
    `SELECT CONSTRAINT_NAME AS name FROM information_schema.KEY_COLUMN_USAGE
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL`,
    { replacements: [table, column] },
  );
  return rows[0] ? rows[0].name : null;
}

module.exports = {
  async up(queryInterface) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_latest');
    if (!mysql) {
      await queryInterface.removeIndex('sequence_runs', 'sequence_runs_contact_id');
      return;
    }
    const key = await foreignKeyOn(queryInterface, 'run_step_executions', 'account_id');
    if (key) await queryInterface.sequelize.query(`ALTER TABLE run_step_executions DROP FOREIGN KEY \`${key}\``);
    const [indexes] = await queryInterface.sequelize.query("SHOW INDEX FROM run_step_executions WHERE Key_name = 'account_id'");
    if (indexes.length > 0) await queryInterface.sequelize.query('ALTER TABLE run_step_executions DROP INDEX account_id');
  },

  async down(queryInterface) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.addIndex('sequence_runs', ['sequence_id', 'contact_id', 'created_at', 'id'], { name: 'sequence_runs_latest' });
    if (!mysql) {
      await queryInterface.addIndex('sequence_runs', ['contact_id'], { name: 'sequence_runs_contact_id' });
      return;
    }
    await queryInterface.sequelize.query(
      'ALTER TABLE run_step_executions ADD FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE ON UPDATE CASCADE',
    );
  },
};
