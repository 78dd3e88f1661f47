'use strict';

// Verified sending domains (issue 34, docs/channels.md "Verified sending domains and the DNS
// records"): the domains an account may send From through the operator's shared relay.
//
// - email_domains: one row per (account, domain). token: what the account publishes at
//   _svc-verify.<domain> (a TXT record). verified_at: when the resolver first saw it (NULL:
//   not yet); it stays verified once seen. last_checked_at: the last lookup.
// - email_domains_account_domain: an account adds a domain once; two adds at once leave one row.
// - email_channels.bounce_domain: the account's own bounce domain (one of its verified domains),
//   the envelope sender's domain; NULL: the server's BOUNCE_DOMAIN.
// The account's foreign key cascades: a deleted account takes its domains.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.createTable(
      'email_domains',
      {
        id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
        account_id: {
          type: Sequelize.UUID,
          allowNull: false,
          references: { model: 'accounts', key: 'id' },
          onDelete: 'CASCADE',
          onUpdate: 'CASCADE',
        },
        domain: { type: Sequelize.STRING(253), allowNull: false },
        token: { type: Sequelize.STRING(64), allowNull: false },
        verified_at: { type: Sequelize.DATE(3), allowNull: true },
        last_checked_at: { type: Sequelize.DATE(3), allowNull: true },
        created_at: { type: Sequelize.DATE(3), allowNull: false },
        updated_at: { type: Sequelize.DATE(3), allowNull: false },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {},
    );
    await queryInterface.addIndex('email_domains', ['account_id', 'domain'], { unique: true, name: 'email_domains_account_domain' });
    await queryInterface.addColumn('email_channels', 'bounce_domain', { type: Sequelize.STRING(253), allowNull: true });
  },

  async down(queryInterface) {
    await queryInterface.removeColumn('email_channels', 'bounce_domain');
    await queryInterface.dropTable('email_domains');
  },
};
