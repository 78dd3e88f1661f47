'use strict';

// Each sequence's active runs, kept by counters (issue 27, 5): `activeRuns`, in every answer
// that shows a sequence (GET, PATCH, the list, the dashboard), was a COUNT over the sequence's
// active runs, past 3 s at a million of them (so a PATCH that re-activated a big sequence
// committed and then answered 503). sequence_active_runs holds per sequence up to 16 shards
// whose sum is its number of runs in pending, running or paused; every transaction that moves
// runs adds its moves to one shard, just before it commits, as it does to run_status_counts
// (src/services/run-status/run-status-counts.ts). Seeded here from the table as it is.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    await queryInterface.createTable('sequence_active_runs', {
      // No foreign key: its check would share-lock the sequence from a transaction's last
      // statement, behind a PATCH that holds the sequence and waits for that transaction's runs.
      sequence_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      shard: { type: Sequelize.SMALLINT, primaryKey: true, allowNull: false },
      runs: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
    }, tableOptions);
    await queryInterface.sequelize.query(
      `INSERT INTO sequence_active_runs (sequence_id, shard, runs)
       SELECT sequence_id, 0, COUNT(*) FROM sequence_runs WHERE status IN ('pending', 'running', 'paused') GROUP BY sequence_id`,
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('sequence_active_runs');
  },
};
