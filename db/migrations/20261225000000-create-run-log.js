'use strict';

// Issue 35: the run log and its projection (src/services/projection/, docs/architecture.md "The
// write path of one step"). A transaction that moves runs no longer writes the analytics
// counters, the runs-by-status gauges or the run events itself: it appends ONE row here with
// what it did (the counters' deltas, the run events, in the order it made them), and a
// projector applies the rows to the counters and the events feed, a batch per transaction, and
// deletes them in that same transaction: each row counts once, whatever crashes, and a restart
// or another process carries on from the rows left.
//
// - run_log: seq (commit order for the changes that conflict: a later writer of the same run or
//   contact waits for the earlier one's COMMIT before it appends), created_at (the writer's
//   time: the projection's lag and freshness are counted from it), body (JSON).
// - projections: one row per projection ('runs'): the lock a projector holds for its
//   transaction (one projector at a time, in any number of processes), the last seq projected
//   and when.
//
// No foreign keys and no secondary index: the projector reads the primary key in order.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    if (mysql) {
      await queryInterface.sequelize.query(
        `CREATE TABLE run_log (
           seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
           created_at DATETIME(3) NOT NULL,
           body LONGTEXT NOT NULL
         ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      );
    } else {
      await queryInterface.sequelize.query(
        'CREATE TABLE run_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, created_at DATETIME NOT NULL, body TEXT NOT NULL)',
      );
    }
    await queryInterface.createTable(
      'projections',
      {
        name: { type: Sequelize.STRING(32), primaryKey: true, allowNull: false },
        projected_seq: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
        projected_at: { type: Sequelize.DATE(3), allowNull: true },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_bin' } : {},
    );
    await queryInterface.bulkInsert('projections', [{ name: 'runs', projected_seq: 0, projected_at: null }]);
  },

  async down(queryInterface) {
    await queryInterface.dropTable('projections');
    await queryInterface.dropTable('run_log');
  },
};
