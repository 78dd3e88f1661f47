'use strict';

// The messages record (issue 28): one row per message a step sends (email or WhatsApp), and
// later per test send from the dashboard (no run, `test` true). docs/messages.md.
//
// - id: the API's message id. message_key: the id derived from run, step and visit of that
//   step; the email's Message-ID and WhatsApp's biz_opaque_callback_data, and the outbox's
//   idempotency id. Unique: a step's visit has one message, whatever retries and restarts do.
//   Binary, as step ids are case-sensitive (as outbox.idempotency_id).
// - run_id, run_visit: the run and its visit (sequence_runs.visit) the message belongs to;
//   unique together (a visit begins one step, which sends at most one message). The run's
//   timeline joins its executions (run_id, visit) to them here. NULL for a test send.
// - step_visit: how many times the run had begun the step (1 the first time), as in the outbox.
// - outbox_id: the outbox row that sends it. No foreign key: the outbound layer's table has
//   its own lifetime (pruned on its own), and the message outlives it.
// - status: queued, sending, sent, captured, delivered, read, failed, skipped, cancelled
//   (src/schemas/message.ts gives their order). error: the failure's code and text
//   (`bounced: 550 ...`, `131026: ...`), or a skip's reason (`unsubscribed`, `no_phone`, ...).
// - provider_message_id: the provider's id of the message (Graph's messages[0].id); the
//   status webhook finds messages by (channel, provider_message_id).
// - content: what was sent, JSON as text (email { from, to, subject, html, text, headers },
//   WhatsApp { request }), written when the message goes `sending`.
// - messages_contact_created: a contact's messages, newest first, by (created_at, id).
// Foreign keys: the contact and the run, both cascading (a deleted contact, a deleted account,
// a pruned run take their messages). No key on account_id or sequence_id: the contact's
// cascade covers the account, the run's the sequence.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const nullable = (type) => ({ type, allowNull: true });

    await queryInterface.createTable('messages', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: { type: Sequelize.UUID, allowNull: false },
      contact_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      run_id: {
        type: Sequelize.UUID,
        allowNull: true,
        references: { model: 'sequence_runs', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      run_visit: nullable(Sequelize.INTEGER),
      sequence_id: nullable(Sequelize.UUID),
      step_id: nullable(Sequelize.STRING(64)),
      step_visit: nullable(Sequelize.INTEGER),
      outbox_id: nullable(Sequelize.UUID),
      test: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: false },
      channel: { type: Sequelize.STRING(16), allowNull: false },
      message_key: { type: Sequelize.STRING(191, true), allowNull: false },
      to_address: { type: Sequelize.STRING(320), allowNull: false },
      subject: nullable(Sequelize.STRING(2000)),
      status: { type: Sequelize.STRING(16), allowNull: false },
      provider_message_id: nullable(Sequelize.STRING(191)),
      error: nullable(Sequelize.STRING(1000)),
      content: nullable(text),
      sent_at: nullable(Sequelize.DATE(3)),
      delivered_at: nullable(Sequelize.DATE(3)),
      read_at: nullable(Sequelize.DATE(3)),
      failed_at: nullable(Sequelize.DATE(3)),
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('messages', ['message_key'], { unique: true, name: 'messages_message_key' });
    await queryInterface.addIndex('messages', ['outbox_id'], { unique: true, name: 'messages_outbox' });
    await queryInterface.addIndex('messages', ['run_id', 'run_visit'], { unique: true, name: 'messages_run_visit' });
    await queryInterface.addIndex('messages', ['channel', 'provider_message_id'], { name: 'messages_provider_id' });
    await queryInterface.addIndex('messages', ['contact_id', 'created_at', 'id'], { name: 'messages_contact_created' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('messages');
  },
};
