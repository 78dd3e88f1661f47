'use strict';

// Run history that stops growing (issue 27, 9): the executions of runs that ended more than
// RUN_HISTORY_DAYS ago are deleted by a maintenance task (src/services/sequences/prune-run-history.ts);
// the run rows stay, with their final status and reason.
//
// - sequence_runs_completed (completed_at, id): the task walks ended runs in the order they ended,
//   from where it stopped. completed_at is set once, when a run ends (NULL while it is active),
//   so the entry moves once per run; the engine's claims and moves never touch it.
// - maintenance_cursors: where such a walk stopped, one row per task, written in the same
//   transaction as each chunk it deletes: a crash resumes at the chunk it was doing, and two
//   processes running the task take turns on the row.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    await queryInterface.addIndex('sequence_runs', ['completed_at', 'id'], { name: 'sequence_runs_completed' });
    await queryInterface.createTable('maintenance_cursors', {
      name: { type: Sequelize.STRING(64), primaryKey: true, allowNull: false },
      position_at: { type: Sequelize.DATE(3), allowNull: false },
      position_id: { type: Sequelize.STRING(36), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
  },

  async down(queryInterface) {
    await queryInterface.dropTable('maintenance_cursors');
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_completed');
  },
};
