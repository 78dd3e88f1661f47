'use strict';

// Issue 36, sections 4, 6 and 8: a sequence's conversions, split variants and wait_for outcomes
// in GET /sequences/{id}/stats (docs/analytics.md "Conversions, variants and waits"). They are
// read from the runs and their executions (not projected into counters), so each read must find
// only the rows it counts, whatever the number of the sequence's other runs:
//
// - sequence_runs_reason_completed (sequence_id, reason, completed_at): a sequence's runs that
//   ended with a reason (`goal_met`), in the order they ended: a range per window. reason and
//   completed_at are written when a run ends (reason is NULL while it moves on; writing NULL
//   over NULL leaves the entry), so the entry moves about once per run.
// - run_step_executions_account_step (account_id, step_id): the executions of an account's steps
//   of one id (the sequence's split and wait_for steps), then joined to their runs by primary
//   key to keep the sequence's. Step ids are the tenant's own, so this reads about the rows that
//   are counted. It costs each execution insert one more index entry; no update moves it.
//   On SQLite it is partial (split and wait_for executions only); MariaDB has no partial index.

const EXECUTION_TYPES = "('split', 'wait_for')";

module.exports = {
  async up(queryInterface) {
    const sqlite = queryInterface.sequelize.getDialect() === 'sqlite';
    await queryInterface.addIndex('sequence_runs', ['sequence_id', 'reason', 'completed_at'], { name: 'sequence_runs_reason_completed' });
    if (sqlite) {
      await queryInterface.sequelize.query(
        `CREATE INDEX run_step_executions_account_step ON run_step_executions (account_id, step_id) WHERE type IN ${EXECUTION_TYPES}`,
      );
    } else {
      await queryInterface.addIndex('run_step_executions', ['account_id', 'step_id'], { name: 'run_step_executions_account_step' });
    }
  },

  async down(queryInterface) {
    await queryInterface.removeIndex('run_step_executions', 'run_step_executions_account_step');
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_reason_completed');
  },
};
