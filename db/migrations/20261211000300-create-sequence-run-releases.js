'use strict';

// Big sequences stay operable (issue 27, 5): re-activating a sequence, or changing its sending
// window, made its waiting runs due in one UPDATE inside the PATCH, which past a couple of
// million runs outlasts the statement deadline. The PATCH now only writes what is to be done,
// here, in its own transaction (a crash loses nothing), and answers; a maintenance task in every
// service and worker walks the sequence's runs a chunk per transaction
// (src/services/sequences/release-runs.ts).
//
// One row per sequence and kind ('unpark': set active again, the runs set aside carry on;
// 'window': a new sending window, the runs held for the old one's opening are due now). A second
// request of the same kind starts the walk again. requested_at is when the change was made (the
// released runs' due time); position_* is where the walk is: the status it walks (pending, then
// running), and the last (created_at, id) it did, along sequence_runs_sequence_status_created.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    await queryInterface.createTable('sequence_run_releases', {
      sequence_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'sequences', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      kind: { type: Sequelize.STRING(16), primaryKey: true, allowNull: false },
      account_id: { type: Sequelize.UUID, allowNull: false },
      requested_at: { type: Sequelize.DATE(3), allowNull: false },
      position_status: { type: Sequelize.STRING(16), allowNull: false },
      position_at: { type: Sequelize.DATE(3), allowNull: false },
      position_id: { type: Sequelize.STRING(36), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
  },

  async down(queryInterface) {
    await queryInterface.dropTable('sequence_run_releases');
  },
};
