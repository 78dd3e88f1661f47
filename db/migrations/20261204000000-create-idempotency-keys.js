'use strict';

// Idempotency-Key (docs/idempotency.md): one row per (account, key), claimed by an INSERT
// before the request runs, so the primary key decides which of two concurrent requests runs.
// status_code is NULL while the first request is still running; locked_until bounds how long
// such an unfinished claim (a crashed instance's) holds the key. expires_at is the 24 h
// retention, purged by age.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_bin' } : {};
    await queryInterface.createTable('idempotency_keys', {
      account_id: {
        type: Sequelize.UUID,
        allowNull: false,
        primaryKey: true,
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      // Binary collation on MySQL: keys are compared exactly, as Stripe does ("A" is not "a").
      idempotency_key: { type: Sequelize.STRING(255), allowNull: false, primaryKey: true },
      // SHA-256 of method, path and canonical JSON body: "the same request".
      request_hash: { type: Sequelize.CHAR(64), allowNull: false },
      status_code: { type: Sequelize.INTEGER, allowNull: true },
      response_body: { type: mysql ? Sequelize.TEXT('long') : Sequelize.TEXT, allowNull: true },
      // The result's headers (Content-Type, Location), JSON.
      response_headers: { type: Sequelize.TEXT, allowNull: true },
      locked_until: { type: Sequelize.DATE(3), allowNull: false },
      expires_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('idempotency_keys', ['expires_at'], { name: 'idempotency_keys_expires_at' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('idempotency_keys');
  },
};
