'use strict';

// Where the service was last reached (issue 26): the address a start printed, kept so that the
// admin command line, run later without the server's environment, makes links to the same
// place (`user:setup-link` after `PORT=8080 npm start`). One row per name; today only
// "local_base_url", written by every start that has no PUBLIC_BASE_URL.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.createTable(
      'service_addresses',
      {
        name: { type: Sequelize.STRING(64), primaryKey: true, allowNull: false },
        url: { type: Sequelize.STRING(2048), allowNull: false },
        updated_at: { type: Sequelize.DATE(3), allowNull: false },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {},
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('service_addresses');
  },
};
