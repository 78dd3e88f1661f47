'use strict';

// The outbound layer (issue 27, item 1): every step that talks to the outside (a webhook now;
// email and WhatsApp next) writes a row here in the transaction that begins the step, and the
// run waits at the step (due_at NULL) until a dispatcher records the row's outcome.
//
// - outbox: one row per send of one visit of one step of one run.
//   - run_visit: the run's visit the send belongs to (sequence_runs.visit). Unique with run_id:
//     a visit of a step has at most one send, so beginning the step again (a resume, a
//     re-activated sequence, a moved run) finds it instead of sending twice.
//   - step_id, step_visit: the step the send was made for and how many times the run had begun
//     that step (1 the first time): with run_id they make idempotency_id, the receiver's
//     deduplication key (`webhook-id`), kept by every retry, stop, pause and move.
//   - channel ('webhook'), target (the endpoint's id; a sender's later): what the dispatchers
//     share out fairly, per (account, target), within a rate per (account, channel).
//   - body: what is sent, composed when the step began (a webhook's JSON body).
//   - status: queued (to send at due_at), sending (a dispatcher holds it until due_at, its
//     lease's end, with claim_token), held (its run is paused or its sequence is not active:
//     not sent until the run carries on), succeeded, failed (for good), cancelled (the run
//     ended or left the step first).
//   - attempt: failed attempts so far (the retry schedule and the limit count these; a request
//     the service abandoned itself, at a stop, is not one).
//   - started_at: when the request under way began; last_error: the last failure's reason.
//   The claim reads outbox_due: per (status, account, channel, target), in due order, so that a
//   pass finds each (account, target) with due work in one index range apiece and never reads
//   the queue of another (docs/architecture.md "The outbound layer").
//   No foreign key on account_id: the run's cascades (a deleted account deletes its runs).
// - run_step_executions gains `succeeded_visit` on MySQL/MariaDB (the visit of a succeeded
//   execution, NULL otherwise) in a unique index with run_id; SQLite has a partial unique index.
//   A visit of a step succeeds at most once, whatever races a move and a record run
//   (issue 27, item 12): the database refuses a second.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const nullable = (type) => ({ type, allowNull: true });

    await queryInterface.createTable('outbox', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: { type: Sequelize.UUID, allowNull: false },
      run_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'sequence_runs', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      run_visit: { type: Sequelize.INTEGER, allowNull: false },
      step_id: { type: Sequelize.STRING(64), allowNull: false },
      step_visit: { type: Sequelize.INTEGER, allowNull: false },
      channel: { type: Sequelize.STRING(16), allowNull: false },
      target: { type: Sequelize.STRING(64), allowNull: false },
      // Binary: step ids are case-sensitive (`Hook` and `hook` are two steps, two ids).
      idempotency_id: { type: Sequelize.STRING(191, true), allowNull: false },
      body: nullable(text),
      status: { type: Sequelize.STRING(16), allowNull: false },
      attempt: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
      due_at: nullable(Sequelize.DATE(3)),
      claim_token: nullable(Sequelize.UUID),
      started_at: nullable(Sequelize.DATE(3)),
      last_error: nullable(Sequelize.STRING(500)),
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('outbox', ['run_id', 'run_visit'], { unique: true, name: 'outbox_run_visit' });
    await queryInterface.addIndex('outbox', ['idempotency_id'], { unique: true, name: 'outbox_idempotency_id' });
    await queryInterface.addIndex('outbox', ['status', 'account_id', 'channel', 'target', 'due_at'], { name: 'outbox_due' });

    if (mysql) {
      await queryInterface.sequelize.query(
        "ALTER TABLE run_step_executions ADD COLUMN succeeded_visit INT AS (CASE WHEN status = 'succeeded' THEN visit ELSE NULL END) STORED",
      );
      await queryInterface.addIndex('run_step_executions', ['run_id', 'succeeded_visit'], { unique: true, name: 'run_step_executions_one_success' });
    } else {
      await queryInterface.sequelize.query(
        "CREATE UNIQUE INDEX run_step_executions_one_success ON run_step_executions (run_id, visit) WHERE status = 'succeeded'",
      );
    }
  },

  async down(queryInterface) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.removeIndex('run_step_executions', 'run_step_executions_one_success');
    if (mysql) await queryInterface.removeColumn('run_step_executions', 'succeeded_visit');
    await queryInterface.dropTable('outbox');
  },
};
