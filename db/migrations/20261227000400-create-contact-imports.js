'use strict';

// Contact imports (issue 37, "Importing contacts"; docs/api.md "Importing contacts"): a CSV file
// in DATA_DIR/imports, moved by the background task a batch per transaction.
//
// - status: queued, running, completed, failed, cancelled.
// - stored_file: the file's name under DATA_DIR/imports (removed once the import is final).
// - delimiter, data_start, column_map (JSON [{ header, field }]): the layout read when it was created,
//   so a resumed import reads no header again.
// - next_offset, next_row: the byte offset and the data row count past the last committed batch,
//   written in that batch's transaction with its contacts: a resumed import starts there, so no
//   row is applied twice.
// - lease_owner, lease_until: the process moving it; another may take it over once the lease ends
//   (a crashed worker). contact_imports_claim finds the queued and the stale ones.
// - The counters are not named rows/updated: ROWS is reserved in MySQL 8.
// contact_import_errors: the rejected rows with their reasons, written in the batch's transaction
// too; its values are the row's cells (JSON array).
module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const text = mysql ? Sequelize.TEXT('long') : Sequelize.TEXT;
    const count = { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 };

    await queryInterface.createTable('contact_imports', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: {
        type: Sequelize.UUID,
        allowNull: false,
        references: { model: 'accounts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      status: { type: Sequelize.STRING(16), allowNull: false },
      file_name: { type: Sequelize.STRING(255), allowNull: true },
      stored_file: { type: Sequelize.STRING(255), allowNull: false },
      delimiter: { type: Sequelize.STRING(1), allowNull: false },
      data_start: { type: Sequelize.BIGINT, allowNull: false },
      column_map: { type: text, allowNull: false },
      tags: { type: text, allowNull: false },
      sequence_id: { type: Sequelize.UUID, allowNull: true },
      opted_in: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: false },
      total_rows: count,
      processed_rows: count,
      inserted_rows: count,
      updated_rows: count,
      failed_rows: count,
      enrolled_rows: count,
      next_offset: { type: Sequelize.BIGINT, allowNull: false },
      next_row: count,
      error: { type: Sequelize.TEXT, allowNull: true },
      lease_owner: { type: Sequelize.STRING(64), allowNull: true },
      lease_until: { type: Sequelize.DATE(3), allowNull: true },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
      started_at: { type: Sequelize.DATE(3), allowNull: true },
      finished_at: { type: Sequelize.DATE(3), allowNull: true },
    }, tableOptions);
    await queryInterface.addIndex('contact_imports', ['status', 'lease_until'], { name: 'contact_imports_claim' });
    await queryInterface.addIndex('contact_imports', ['account_id', 'created_at', 'id'], { name: 'contact_imports_account' });

    await queryInterface.createTable('contact_import_errors', {
      import_id: {
        type: Sequelize.UUID,
        allowNull: false,
        primaryKey: true,
        references: { model: 'contact_imports', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      row_index: { type: Sequelize.INTEGER, allowNull: false, primaryKey: true },
      reason: { type: Sequelize.TEXT, allowNull: false },
      cells: { type: text, allowNull: false },
    }, tableOptions);
  },

  async down(queryInterface) {
    await queryInterface.dropTable('contact_import_errors');
    await queryInterface.dropTable('contact_imports');
  },
};
