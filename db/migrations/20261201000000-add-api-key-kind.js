'use strict';

// API keys get a kind: `integration` (the public API) or `runner` (the internal
// sequence runner, which may also move runs). Existing keys become integration keys: the
// column's default fills them in. The database refuses any other value; MySQL 8.0.16+ and
// MariaDB enforce CHECK constraints, and SQLite checks a column's CHECK against the rows
// already there when the column is added.

const KINDS = "('integration','runner')";

module.exports = {
  async up(queryInterface) {
    const { sequelize } = queryInterface;
    if (sequelize.getDialect() === 'sqlite') {
      // SQLite cannot add a table constraint to an existing table, only a column's own.
      await sequelize.query(
        `ALTER TABLE api_keys ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'integration' CHECK (kind IN ${KINDS})`,
      );
    } else {
      // Compared as bytes: under the table's collation 'RUNNER' and 'runner ' would equal
      // 'runner' and pass. Named, so that down() can drop it first: MySQL refuses to drop a
      // column a CHECK still uses.
      await sequelize.query(
        `ALTER TABLE api_keys ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'integration', ` +
          `ADD CONSTRAINT api_keys_kind_check CHECK (CAST(kind AS BINARY) IN ${KINDS})`,
      );
    }
  },

  async down(queryInterface) {
    const { sequelize } = queryInterface;
    if (sequelize.getDialect() === 'sqlite') {
      await sequelize.query('ALTER TABLE api_keys DROP COLUMN kind');
    } else {
      await sequelize.query('ALTER TABLE api_keys DROP CONSTRAINT api_keys_kind_check, DROP COLUMN kind');
    }
  },
};
