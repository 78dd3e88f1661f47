'use strict';

// Each account's own senders (issue 28, docs/channels.md): one row per account and channel,
// written by PUT /channels/email and /channels/whatsapp.
//
// - *_secret columns hold AES-256-GCM ciphertext ("v1.<key id>.<data>", src/services/secrets/
//   secret-box.ts), never plaintext: the SMTP URL (it carries the relay's password), the DKIM
//   private key, the WhatsApp access token.
// - What the API shows is kept beside them in clear, so that reading the settings needs no key:
//   the SMTP relay's host, the DKIM public key (the DNS record), the token's last 4 characters.
// - max_per_second: as the account set it (NULL: the server-wide limit); capped by the
//   server-wide limit when it is read, so a lowered limit applies at once.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const account = {
      type: Sequelize.UUID,
      primaryKey: true,
      allowNull: false,
      references: { model: 'accounts', key: 'id' },
      onDelete: 'CASCADE',
      onUpdate: 'CASCADE',
    };
    const stamps = {
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    };

    await queryInterface.createTable(
      'email_channels',
      {
        account_id: account,
        from_address: { type: Sequelize.STRING(254), allowNull: false },
        reply_to: { type: Sequelize.STRING(254), allowNull: true },
        smtp_host: { type: Sequelize.STRING(300), allowNull: true },
        smtp_url_secret: { type: text, allowNull: true },
        dkim_domain: { type: Sequelize.STRING(253), allowNull: true },
        dkim_selector: { type: Sequelize.STRING(63), allowNull: true },
        dkim_public_key: { type: text, allowNull: true },
        dkim_private_key_secret: { type: text, allowNull: true },
        max_per_second: { type: Sequelize.INTEGER, allowNull: true },
        ...stamps,
      },
      tableOptions,
    );

    await queryInterface.createTable(
      'whatsapp_channels',
      {
        account_id: account,
        phone_number_id: { type: Sequelize.STRING(64), allowNull: false },
        access_token_secret: { type: text, allowNull: false },
        access_token_last4: { type: Sequelize.STRING(4), allowNull: false },
        max_per_second: { type: Sequelize.INTEGER, allowNull: true },
        ...stamps,
      },
      tableOptions,
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('whatsapp_channels');
    await queryInterface.dropTable('email_channels');
  },
};
