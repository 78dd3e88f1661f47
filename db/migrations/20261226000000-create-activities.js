'use strict';

// Activities (issue 36, section 1): the contact's own events, posted by the account's systems
// (docs/activities.md).
//
// - row_id: the row's own key, a UUIDv7 (time-ordered, so InnoDB keeps rows posted together side
//   by side). Internal: a writer that finds its proposed row_id on the row it reads back knows it
//   inserted it (the same idiom as the contacts' upsert).
// - id: the API's activity id, the client's (1 to 128 of [A-Za-z0-9_.:-], or a UUID made when
//   absent). Binary: compared byte for byte. activities_client_id makes it unique per account:
//   the database decides which of two concurrent posts of one id stores its row.
// - name: binary too (`order_placed` is not `Order_Placed`); properties: the JSON object, as text.
// - occurred_at: when it happened (the client's, or the receipt's); received_at: when it came.
// - activities_contact_occurred: a contact's activities, newest first, by (occurred_at, id).
// - activities_occurred: the retention prune walks it from its oldest.
// The contact's foreign key cascades, as the messages' does: a deleted contact (or account) takes
// its activities. No key on account_id: the contact's cascade covers the account.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;

    await queryInterface.createTable('activities', {
      row_id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: { type: Sequelize.UUID, allowNull: false },
      id: { type: Sequelize.STRING(128, true), allowNull: false },
      contact_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      name: { type: Sequelize.STRING(128, true), allowNull: false },
      properties: { type: text, allowNull: false },
      occurred_at: { type: Sequelize.DATE(3), allowNull: false },
      received_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('activities', ['account_id', 'id'], { unique: true, name: 'activities_client_id' });
    await queryInterface.addIndex('activities', ['account_id', 'contact_id', 'occurred_at', 'id'], { name: 'activities_contact_occurred' });
    await queryInterface.addIndex('activities', ['occurred_at'], { name: 'activities_occurred' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('activities');
  },
};
