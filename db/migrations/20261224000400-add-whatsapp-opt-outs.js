'use strict';

// WhatsApp opt-outs and sender health (issue 34, docs/channels.md "WhatsApp opt-outs and sender
// health").
//
// - whatsapp_channels: the account's own Meta app secret (sealed as the access token is), its
//   webhook verify token as a keyed hash (it is only ever compared: the GET handshake looks it
//   up by that hash, whatever the account), and its opt-out keywords (a JSON array; NULL: the
//   defaults). An index on phone_number_id: an inbound post names the number, not the account.
// - contacts.phone_digits: the phone as the digits WhatsApp sends (`wa_id`), computed by the
//   database from the free-text phone: spaces, dots, dashes, brackets and a leading + removed,
//   then an international 00. `+49 151 1285 5001`, `004915112855001` and `4915112855001` all
//   read `4915112855001`. A VIRTUAL generated column with an index (account_id, phone_digits):
//   nothing writes it (the contact writers name their columns), and an inbound message finds
//   its contacts by one index range per number.
// - whatsapp_recipient_failures: per account and number (E.164 with its +), the undeliverable
//   (131026) answers in a row; a delivered or read status sets it back to 0. Written with
//   conditional UPDATEs only (src/services/messages/whatsapp-recipient-failures.ts).

const STRIPPED = [' ', '-', '.', '(', ')', '+'];

function digitsOf(column) {
  const compact = STRIPPED.reduce((sql, char) => `REPLACE(${sql}, '${char}', '')`, column);
  return `CASE WHEN ${compact} LIKE '00%' THEN SUBSTR(${compact}, 3) ELSE ${compact} END`;
}

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;

    await queryInterface.addColumn('whatsapp_channels', 'app_secret_secret', { type: text, allowNull: true });
    await queryInterface.addColumn('whatsapp_channels', 'verify_token_hash', { type: Sequelize.STRING(64), allowNull: true });
    await queryInterface.addColumn('whatsapp_channels', 'opt_out_keywords', { type: text, allowNull: true });
    await queryInterface.addIndex('whatsapp_channels', ['phone_number_id'], { name: 'whatsapp_channels_phone_number' });
    await queryInterface.addIndex('whatsapp_channels', ['verify_token_hash'], { name: 'whatsapp_channels_verify_token' });

    await queryInterface.sequelize.query(
      `ALTER TABLE contacts ADD COLUMN phone_digits VARCHAR(32) GENERATED ALWAYS AS (${digitsOf('phone')}) VIRTUAL`,
    );
    await queryInterface.addIndex('contacts', ['account_id', 'phone_digits'], { name: 'contacts_account_phone_digits' });

    await queryInterface.createTable(
      'whatsapp_recipient_failures',
      {
        account_id: {
          type: Sequelize.UUID,
          primaryKey: true,
          allowNull: false,
          references: { model: 'accounts', key: 'id' },
          onDelete: 'CASCADE',
          onUpdate: 'CASCADE',
        },
        address: { type: Sequelize.STRING(20), primaryKey: true, allowNull: false },
        consecutive: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
        updated_at: { type: Sequelize.DATE(3), allowNull: false },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_bin' } : {},
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('whatsapp_recipient_failures');
    await queryInterface.removeIndex('contacts', 'contacts_account_phone_digits');
    await queryInterface.sequelize.query('ALTER TABLE contacts DROP COLUMN phone_digits');
    await queryInterface.removeIndex('whatsapp_channels', 'whatsapp_channels_verify_token');
    await queryInterface.removeIndex('whatsapp_channels', 'whatsapp_channels_phone_number');
    for (const column of ['opt_out_keywords', 'verify_token_hash', 'app_secret_secret']) {
      await queryInterface.sequelize.query(`ALTER TABLE whatsapp_channels DROP COLUMN ${column}`);
    }
  },
};
