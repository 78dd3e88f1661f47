'use strict';

// Per-step analytics (issue 29, docs/analytics.md), kept by counters instead of counted over
// sequence_runs, run_step_executions or messages, which grow without end. Every transaction
// that moves runs or changes a message's status adds what it did to these rows, just before it
// commits (src/services/analytics/progress-counters.ts): the figures commit with the runs and
// messages, or not at all. What a reader reads depends on the number of steps and days, never
// on the number of runs.
//
// The daily rows are not sharded: a shard per transaction multiplied the rows of a busy
// sequence's day by the shards, and the read with them (bench/sequence-stats.ts, 8 shards: 66
// rows at 1,000 runs, 963 at 20,000, the answer 1.9 times slower), while only the transactions
// of one sequence meet on them, and only for their COMMIT. The waiting counter, one row per
// step for ever, has 8 shards: every move of every run of the sequence meets there.
//
// - sequence_step_days: per sequence, UTC day, step, outcome (reached, completed, skipped,
//   failed) and reason (a skip's; '' for the others): how many runs.
// - sequence_days: per sequence, UTC day, metric (enrollments, completions, exits; sent,
//   delivered, read, failed messages) and reason (an exit's; '' for the others).
// - sequence_step_waiting: per sequence and step, the active runs (pending, running, paused)
//   at it now, in up to 8 shards whose sum is the figure.
//
// Existing runs: the waiting counter is seeded here from the runs as they are (it is a "now",
// and would be wrong for ever otherwise). The daily figures count from this migration on: the
// history they would need (how each run left each step, why it ended, when each status of a
// message was first reached) is not all in the tables, and a partial backfill would be figures
// no one could tell from exact ones. Exact from here on, provided no process of an earlier
// version still writes runs after it (stop them before migrating).
//
// No foreign keys: their checks would share-lock the sequence from a transaction's last
// statement (see 20261211000500-create-sequence-active-runs.js). Days are 'YYYY-MM-DD' text:
// the same on both databases, and compared as text.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_bin' } : {};
    await queryInterface.createTable('sequence_step_days', {
      sequence_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      day: { type: Sequelize.STRING(10), primaryKey: true, allowNull: false },
      step_id: { type: Sequelize.STRING(64), primaryKey: true, allowNull: false },
      outcome: { type: Sequelize.STRING(16), primaryKey: true, allowNull: false },
      reason: { type: Sequelize.STRING(32), primaryKey: true, allowNull: false, defaultValue: '' },
      runs: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
    }, tableOptions);
    await queryInterface.createTable('sequence_days', {
      sequence_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      day: { type: Sequelize.STRING(10), primaryKey: true, allowNull: false },
      metric: { type: Sequelize.STRING(16), primaryKey: true, allowNull: false },
      reason: { type: Sequelize.STRING(32), primaryKey: true, allowNull: false, defaultValue: '' },
      n: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
    }, tableOptions);
    await queryInterface.createTable('sequence_step_waiting', {
      sequence_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      step_id: { type: Sequelize.STRING(64), primaryKey: true, allowNull: false },
      shard: { type: Sequelize.SMALLINT, primaryKey: true, allowNull: false },
      runs: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
    }, tableOptions);
    await queryInterface.sequelize.query(
      `INSERT INTO sequence_step_waiting (sequence_id, step_id, shard, runs)
       SELECT sequence_id, current_step_id, 0, COUNT(*) FROM sequence_runs
       WHERE status IN ('pending', 'running', 'paused') AND current_step_id IS NOT NULL GROUP BY sequence_id, current_step_id`,
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('sequence_step_waiting');
    await queryInterface.dropTable('sequence_days');
    await queryInterface.dropTable('sequence_step_days');
  },
};
