'use strict';

// Events (issue 10): one row per change, written in the transaction of the change.
//
// Commit order: a reader that pages by an auto-increment id can skip an event whose
// transaction took a lower id but committed after the reader passed it. So each account has a
// counter row in event_sequences; a writing transaction bumps it as its last statement before
// COMMIT and numbers its events from it. The bump holds the row lock until COMMIT, so the next
// transaction of the account gets its numbers only after this one is visible: `seq` order is
// commit order, per account, and a feed that pages by `seq` never skips. (SQLite runs one
// writer at a time, so the same holds there.)

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const accountId = {
      type: Sequelize.UUID,
      allowNull: false,
      references: { model: 'accounts', key: 'id' },
      onDelete: 'CASCADE',
      onUpdate: 'CASCADE',
    };

    await queryInterface.createTable('event_sequences', {
      account_id: { ...accountId, primaryKey: true },
      last_seq: { type: Sequelize.BIGINT, allowNull: false },
    }, tableOptions);

    await queryInterface.createTable('events', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: accountId,
      seq: { type: Sequelize.BIGINT, allowNull: false },
      type: { type: Sequelize.STRING(64), allowNull: false },
      // The event's `data`, JSON as text (as contacts' JSON columns are).
      data: { type: mysql ? Sequelize.TEXT('long') : Sequelize.TEXT, allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('events', ['account_id', 'seq'], { unique: true, name: 'events_account_seq_unique' });
    await queryInterface.addIndex('events', ['account_id', 'type', 'seq'], { name: 'events_account_type_seq' });
    // Retention purges by age.
    await queryInterface.addIndex('events', ['created_at'], { name: 'events_created_at' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('events');
    await queryInterface.dropTable('event_sequences');
  },
};
