'use strict';

// Webhook endpoints and their deliveries (issue 10).
//
// - webhook_endpoints.cursor_seq: the last events.seq of the account already fanned out to
//   this endpoint. events.seq is commit order per account, so a fan-out that reads past the
//   cursor never skips an event that commits later.
// - webhook_deliveries: one row per (endpoint, event); unique, so fan-out is idempotent.
//   lease_until/claim_token: a claimed delivery belongs to one dispatcher until its lease ends;
//   a dispatcher that dies mid-delivery leaves a lease that expires, and the row is claimed again.
//   order_key (the contact) keeps deliveries of one contact to one endpoint in event order.
// - webhook_attempts: one row per HTTP attempt, for the deliveries list.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const date = { type: Sequelize.DATE(3), allowNull: true };

    await queryInterface.createTable('webhook_endpoints', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      url: { type: Sequelize.STRING(2048), allowNull: false },
      description: { type: Sequelize.STRING(500), allowNull: true },
      // JSON array of event types, or NULL for every type.
      event_types: { type: text, allowNull: true },
      enabled: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: true },
      secret: { type: Sequelize.STRING(128), allowNull: false },
      previous_secret: { type: Sequelize.STRING(128), allowNull: true },
      previous_secret_expires_at: date,
      cursor_seq: { type: Sequelize.BIGINT, allowNull: false, defaultValue: 0 },
      failing_since: date,
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('webhook_endpoints', ['account_id', 'created_at'], { name: 'webhook_endpoints_account' });

    await queryInterface.createTable('webhook_deliveries', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      endpoint_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'webhook_endpoints', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      event_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'events', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      event_seq: { type: Sequelize.BIGINT, allowNull: false },
      order_key: { type: Sequelize.STRING(64), allowNull: true },
      // pending, succeeded or abandoned (its endpoint was disabled after 3 days of failures)
      status: { type: Sequelize.STRING(16), allowNull: false },
      attempts: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
      next_attempt_at: { type: Sequelize.DATE(3), allowNull: false },
      lease_until: date,
      claim_token: { type: Sequelize.UUID, allowNull: true },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('webhook_deliveries', ['endpoint_id', 'event_id'], { unique: true, name: 'webhook_deliveries_endpoint_event' });
    await queryInterface.addIndex('webhook_deliveries', ['status', 'next_attempt_at'], { name: 'webhook_deliveries_due' });
    await queryInterface.addIndex('webhook_deliveries', ['endpoint_id', 'order_key', 'status', 'event_seq'], { name: 'webhook_deliveries_order' });

    await queryInterface.createTable('webhook_attempts', {
      id: { type: Sequelize.INTEGER, primaryKey: true, autoIncrement: true, allowNull: false },
      delivery_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'webhook_deliveries', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      endpoint_id: { type: Sequelize.UUID, allowNull: false },
      event_id: { type: Sequelize.UUID, allowNull: false },
      attempt: { type: Sequelize.INTEGER, allowNull: false },
      response_status: { type: Sequelize.INTEGER, allowNull: true },
      error: { type: Sequelize.STRING(500), allowNull: true },
      duration_ms: { type: Sequelize.INTEGER, allowNull: false },
      next_attempt_at: date,
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('webhook_attempts', ['endpoint_id', 'id'], { name: 'webhook_attempts_endpoint' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('webhook_attempts');
    await queryInterface.dropTable('webhook_deliveries');
    await queryInterface.dropTable('webhook_endpoints');
  },
};
