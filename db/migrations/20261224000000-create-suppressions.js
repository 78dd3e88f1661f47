'use strict';

// Suppressions (issue 34): the addresses an account never sends to on a channel. Keyed by the
// address, not the contact, so deleting and re-creating a contact does not lift one.
//
// - address: an email normalized as contacts' are (email_normalized), or a phone in E.164 with
//   its + (`+4915112855001`). Binary: the normalized form is the key, compared byte for byte.
// - reason: hard_bounce, complaint, unsubscribe, opt_out, invalid, manual.
// - source: what added it (`message:<id>`, `provider:<event>`, `user:<id>`, `api_key:<id>`).
// - suppressions_address: one row per (account, channel, address): two writers adding the same
//   address both succeed, one row remains (INSERT that ignores the clash).
// - suppressions_listed: the list, newest first, by (created_at, id) within the account.
// The account's foreign key cascades: a deleted account takes its list.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.createTable(
      'suppressions',
      {
        id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
        account_id: {
          type: Sequelize.UUID,
          allowNull: false,
          references: { model: 'accounts', key: 'id' },
          onDelete: 'CASCADE',
          onUpdate: 'CASCADE',
        },
        channel: { type: Sequelize.STRING(16), allowNull: false },
        address: { type: Sequelize.STRING(320, true), allowNull: false },
        reason: { type: Sequelize.STRING(16), allowNull: false },
        source: { type: Sequelize.STRING(255), allowNull: true },
        created_at: { type: Sequelize.DATE(3), allowNull: false },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {},
    );
    await queryInterface.addIndex('suppressions', ['account_id', 'channel', 'address'], { unique: true, name: 'suppressions_address' });
    await queryInterface.addIndex('suppressions', ['account_id', 'created_at', 'id'], { name: 'suppressions_listed' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('suppressions');
  },
};
