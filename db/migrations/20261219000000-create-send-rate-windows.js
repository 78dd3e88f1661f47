'use strict';

// The throttle of messages per account and channel, shared by every process (issue 28,
// docs/channels.md "Throttles"), when Redis is not configured: one row per (account, channel,
// second) counting the sends the dispatchers of all processes started in that second. A
// dispatcher reserves its sends in a transaction that locks the row, so two processes never
// both take the last one. Rows of past seconds are deleted by the reserving dispatcher itself
// (the same account and channel), so the table holds a few rows per busy sender.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.createTable(
      'send_rate_windows',
      {
        account_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
        channel: { type: Sequelize.STRING(16), primaryKey: true, allowNull: false },
        // The second, as milliseconds since the epoch on the engine's clock (a multiple of 1,000).
        window_start: { type: Sequelize.BIGINT, primaryKey: true, allowNull: false },
        started: { type: Sequelize.INTEGER, allowNull: false },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {},
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('send_rate_windows');
  },
};
