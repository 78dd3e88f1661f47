'use strict';

// Issue 36, sections 2 to 4: sequences entered by an activity, runs that wait for one, goals.
//
// - sequences.entry, sequences.goal: the definitions, as JSON text (docs/activities.md).
//   entry_activity and goal_activity: their activity names, copied out so that an activity finds
//   the sequences it enrolls in or converts by index (sequences_entry_activity,
//   sequences_goal_activity), not by reading every sequence's JSON. Binary: names compare exactly.
// - sequence_runs.trigger_activity: the activity that started the run (JSON: id, name,
//   properties, occurredAt), read by templates and branches as `trigger`. A copy, not a key: a
//   run outlives the activities' retention.
// - sequence_runs.waited_activity: the activity that last ended one of the run's wait_for steps
//   (JSON, with the visit of the step it ended), read by later steps as `waited`.
// - sequence_entries: one row per (sequence, contact) ever enrolled by an activity, with the
//   start of its latest such run: `reentry: "never"` and `{ after }` are decided on it by the
//   database (an insert that finds the row, an update whose WHERE says when), and it survives
//   the runs' history prune.
// - run_waits: one row per run waiting at a wait_for step, written as the step begins and
//   deleted as it ends. run_waits_contact_activity finds, as an activity commits, the waits of
//   its contact for its name: a handful of rows whatever the number of runs waiting for other
//   contacts. match_values: the step's match, rendered for the run when the wait began (JSON).
//   visit: the run's visit at the step, so a wait row is only ever read against the same visit.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const nullable = (type) => ({ type, allowNull: true });

    await queryInterface.addColumn('sequences', 'entry', nullable(text));
    await queryInterface.addColumn('sequences', 'entry_activity', nullable(Sequelize.STRING(128, true)));
    await queryInterface.addColumn('sequences', 'goal', nullable(text));
    await queryInterface.addColumn('sequences', 'goal_activity', nullable(Sequelize.STRING(128, true)));
    await queryInterface.addIndex('sequences', ['account_id', 'entry_activity'], { name: 'sequences_entry_activity' });
    await queryInterface.addIndex('sequences', ['account_id', 'goal_activity'], { name: 'sequences_goal_activity' });

    await queryInterface.addColumn('sequence_runs', 'trigger_activity', nullable(text));
    await queryInterface.addColumn('sequence_runs', 'waited_activity', nullable(text));

    await queryInterface.createTable('sequence_entries', {
      sequence_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'sequences', key: 'id' },
        onDelete: 'CASCADE',
      },
      contact_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
      },
      last_started_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);

    await queryInterface.createTable('run_waits', {
      run_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'sequence_runs', key: 'id' },
        onDelete: 'CASCADE',
      },
      account_id: { type: Sequelize.UUID, allowNull: false },
      contact_id: { type: Sequelize.UUID, allowNull: false },
      activity: { type: Sequelize.STRING(128, true), allowNull: false },
      match_values: nullable(text),
      visit: { type: Sequelize.INTEGER, allowNull: false },
      step_id: { type: Sequelize.STRING(64), allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('run_waits', ['account_id', 'contact_id', 'activity'], { name: 'run_waits_contact_activity' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('run_waits');
    await queryInterface.dropTable('sequence_entries');
    const sqlite = queryInterface.sequelize.getDialect() === 'sqlite';
    for (const index of ['sequences_entry_activity', 'sequences_goal_activity']) await queryInterface.removeIndex('sequences', index);
    const drop = async (table, column) =>
      sqlite ? queryInterface.sequelize.query(`ALTER TABLE ${table} DROP COLUMN ${column}`) : queryInterface.removeColumn(table, column);
    for (const column of ['entry', 'entry_activity', 'goal', 'goal_activity']) await drop('sequences', column);
    for (const column of ['trigger_activity', 'waited_activity']) await drop('sequence_runs', column);
  },
};
