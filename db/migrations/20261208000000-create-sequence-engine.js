'use strict';

// The sequence engine (issue 22): sequences that carry steps, and runs that the service moves
// through them itself.
//
// - sequence_versions: the steps of a sequence, one row per version, never changed once
//   written. A run keeps the version it started on (sequence_runs.version) unless an update
//   moves it. sequences.version is the current one; NULL for a sequence that never had steps,
//   whose runs are moved from outside as before (runs.transition).
// - sequences.exit_when, sending_window: the sequence's rules, JSON as text; they apply to
//   every run of the sequence, whatever its version.
// - sequence_runs gains the engine's state:
//   - current_step_id, visit (how many steps the run has entered: a step entered again, by a
//     branch back to it, is a new visit), attempt (attempts of the current visit),
//     step_started_at (the current step began: a wait that is waiting, a webhook in flight);
//   - due_at: when the engine must look at the run next. NULL when nothing is due: a run of a
//     sequence without steps, an ended run, a paused run (its due time is kept in
//     paused_due_at and given back by resume). A claim sets due_at to the end of its lease, so
//     a worker that dies mid-step leaves a run that becomes due again by itself. The claim
//     reads the sequence_runs_due index in due_at order and nothing else: no join, no
//     ordering across accounts that one shard of the table could not answer alone.
//   - claim_token: the claim that holds the run; every write of a claimed run names it, so a
//     worker whose lease ran out cannot overwrite what the next one did.
//   - reason: why the service ended the run (a step's failure, an exit rule, unenroll).
// - run_step_executions: one row per attempt of a step, unique per (run, visit, attempt): a
//   step is carried out at most once in the service's own records.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const fk = (table) => ({
      type: Sequelize.UUID,
      allowNull: false,
      references: { model: table, key: 'id' },
      onDelete: 'CASCADE',
      onUpdate: 'CASCADE',
    });
    const nullable = (type) => ({ type, allowNull: true });

    await queryInterface.createTable('sequence_versions', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: fk('accounts'),
      sequence_id: fk('sequences'),
      version: { type: Sequelize.INTEGER, allowNull: false },
      // The steps, JSON as text.
      steps: { type: text, allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('sequence_versions', ['sequence_id', 'version'], { unique: true, name: 'sequence_versions_unique' });

    await queryInterface.addColumn('sequences', 'version', nullable(Sequelize.INTEGER));
    await queryInterface.addColumn('sequences', 'exit_when', nullable(text));
    await queryInterface.addColumn('sequences', 'sending_window', nullable(text));

    await queryInterface.addColumn('sequence_runs', 'version', nullable(Sequelize.INTEGER));
    await queryInterface.addColumn('sequence_runs', 'current_step_id', nullable(Sequelize.STRING(64)));
    await queryInterface.addColumn('sequence_runs', 'visit', { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 });
    await queryInterface.addColumn('sequence_runs', 'attempt', { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 });
    await queryInterface.addColumn('sequence_runs', 'step_started_at', nullable(Sequelize.DATE(3)));
    await queryInterface.addColumn('sequence_runs', 'due_at', nullable(Sequelize.DATE(3)));
    await queryInterface.addColumn('sequence_runs', 'paused_due_at', nullable(Sequelize.DATE(3)));
    await queryInterface.addColumn('sequence_runs', 'paused_from', nullable(Sequelize.STRING(16)));
    await queryInterface.addColumn('sequence_runs', 'claim_token', nullable(Sequelize.UUID));
    await queryInterface.addColumn('sequence_runs', 'reason', nullable(Sequelize.STRING(500)));
    await queryInterface.addIndex('sequence_runs', ['due_at'], { name: 'sequence_runs_due' });
    // A sequence's runs by version and step: moving runs to a new version, the dashboard's
    // position counts.
    await queryInterface.addIndex('sequence_runs', ['sequence_id', 'version', 'current_step_id'], { name: 'sequence_runs_position' });

    await queryInterface.createTable('run_step_executions', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: fk('accounts'),
      run_id: fk('sequence_runs'),
      visit: { type: Sequelize.INTEGER, allowNull: false },
      attempt: { type: Sequelize.INTEGER, allowNull: false },
      step_id: { type: Sequelize.STRING(64), allowNull: false },
      type: { type: Sequelize.STRING(16), allowNull: false },
      // running, succeeded, failed or skipped
      status: { type: Sequelize.STRING(16), allowNull: false },
      reason: nullable(Sequelize.STRING(500)),
      // What the step did, JSON as text: the branch taken, the receiver's answer.
      detail: nullable(text),
      started_at: { type: Sequelize.DATE(3), allowNull: false },
      finished_at: nullable(Sequelize.DATE(3)),
    }, tableOptions);
    await queryInterface.addIndex('run_step_executions', ['run_id', 'visit', 'attempt'], { unique: true, name: 'run_step_executions_unique' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('run_step_executions');
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_position');
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_due');
    for (const column of ['version', 'current_step_id', 'visit', 'attempt', 'step_started_at', 'due_at', 'paused_due_at', 'paused_from', 'claim_token', 'reason']) {
      await queryInterface.removeColumn('sequence_runs', column);
    }
    for (const column of ['version', 'exit_when', 'sending_window']) await queryInterface.removeColumn('sequences', column);
    await queryInterface.dropTable('sequence_versions');
  },
};
