'use strict';

// One bad run cannot hold its batch (issue 27, item 8). A run whose claim runs out again and
// again without its outcome being recorded (a pass that fails on it, a worker that dies on it)
// is set aside after a few claims instead of being claimed forever
// (src/services/engine/run-queue.ts):
// - expired_claims: claims of the run in a row whose lease ran out before a record; a claim
//   that finds the run's claim_token still set (its last claim never ended) counts one more,
//   one that finds it cleared starts again from 0.
// - dead_lettered_at: when it was set aside (due_at NULL: nothing claims it until pause and
//   resume, or a move, makes it due again; its next claim clears it); NULL otherwise. The engine logs each one and counts
//   it (sequence_runs_dead_lettered_total, docs/operations.md).
// Both are added in place on MariaDB (no table copy).

module.exports = {
  async up(queryInterface, Sequelize) {
    await queryInterface.addColumn('sequence_runs', 'expired_claims', { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 });
    await queryInterface.addColumn('sequence_runs', 'dead_lettered_at', { type: Sequelize.DATE(3), allowNull: true });
  },

  async down(queryInterface) {
    // SQLite: plain DROP COLUMN (3.35+). Sequelize's removeColumn rebuilds the table from
    // PRAGMA table_info, which leaves out the generated due_account column that
    // sequence_runs_account_due indexes, and fails on that index.
    if (queryInterface.sequelize.getDialect() === 'sqlite') {
      await queryInterface.sequelize.query('ALTER TABLE sequence_runs DROP COLUMN dead_lettered_at');
      await queryInterface.sequelize.query('ALTER TABLE sequence_runs DROP COLUMN expired_claims');
      return;
    }
    await queryInterface.removeColumn('sequence_runs', 'dead_lettered_at');
    await queryInterface.removeColumn('sequence_runs', 'expired_claims');
  },
};
