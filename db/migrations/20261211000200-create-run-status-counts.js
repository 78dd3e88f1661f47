'use strict';

// Runs by status, kept by counters (issue 27, 9): the `sequence_runs{status}` metric read a
// GROUP BY over the whole table, which grows without end. run_status_counts holds, per status,
// 16 shards whose sum is the number of runs in that status. Every transaction that inserts,
// deletes or changes the status of runs adds its moves to one shard, chosen at random, just
// before it commits (src/services/sequences/run-status-counts.ts): the counters commit with the
// runs, and concurrent writers seldom meet on a row.
//
// Seeded here from the table as it is, every (status, shard) row made up front (a writer then
// only ever updates a row that exists). Exact from this migration on, provided no process of an
// earlier version still writes runs after it (stop them before migrating).

const STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];
const SHARDS = 16;

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    await queryInterface.createTable('run_status_counts', {
      status: { type: Sequelize.STRING(16), primaryKey: true, allowNull: false },
      shard: { type: Sequelize.SMALLINT, primaryKey: true, allowNull: false },
      runs: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
    }, tableOptions);
    const rows = [];
    for (const status of STATUSES) for (let shard = 0; shard < SHARDS; shard += 1) rows.push({ status, shard, runs: 0 });
    await queryInterface.bulkInsert('run_status_counts', rows);
    await queryInterface.sequelize.query(
      `UPDATE run_status_counts SET runs = (SELECT COUNT(*) FROM sequence_runs r WHERE r.status = run_status_counts.status) WHERE shard = 0`,
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('run_status_counts');
  },
};
