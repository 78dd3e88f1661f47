'use strict';

// sequelize-cli format: run at start-up by the service (umzug) and by `npm run db:migrate`.
// The same file must work on SQLite, MariaDB 10.11 and MySQL 8.

const ACTIVE = "('pending','running','paused')";

function timestamps(Sequelize) {
  return {
    created_at: { type: Sequelize.DATE(3), allowNull: false },
    updated_at: { type: Sequelize.DATE(3), allowNull: false },
  };
}

function fk(Sequelize, table, onDelete) {
  return {
    type: Sequelize.UUID,
    allowNull: false,
    references: { model: table, key: 'id' },
    onDelete,
    onUpdate: 'CASCADE',
  };
}

module.exports = {
  async up(queryInterface, Sequelize) {
    const dialect = queryInterface.sequelize.getDialect();
    const id = { type: Sequelize.UUID, primaryKey: true, allowNull: false };
    const mysql = dialect !== 'sqlite';
    // utf8mb4 whatever the server default; emails compare byte-wise on MySQL as they do on SQLite
    // (a *_ci collation would also fold accents, so two addresses SQLite keeps apart would clash).
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const binaryString = (length) =>
      mysql ? `VARCHAR(${length}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin` : Sequelize.STRING(length);

    await queryInterface.createTable('accounts', {
      id,
      name: { type: Sequelize.STRING(255), allowNull: false },
      max_active_runs: { type: Sequelize.INTEGER, allowNull: true },
      ...timestamps(Sequelize),
    }, tableOptions);

    await queryInterface.createTable('api_keys', {
      id,
      account_id: fk(Sequelize, 'accounts', 'CASCADE'),
      name: { type: Sequelize.STRING(255), allowNull: false },
      key_hash: { type: Sequelize.CHAR(64), allowNull: false },
      key_prefix: { type: Sequelize.STRING(8), allowNull: false },
      active: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: true },
      expires_at: { type: Sequelize.DATE(3), allowNull: true },
      last_used_at: { type: Sequelize.DATE(3), allowNull: true },
      ...timestamps(Sequelize),
    }, tableOptions);
    await queryInterface.addIndex('api_keys', ['key_hash'], { unique: true, name: 'api_keys_key_hash_unique' });
    await queryInterface.addIndex('api_keys', ['account_id'], { name: 'api_keys_account_id' });

    await queryInterface.createTable('contacts', {
      id,
      account_id: fk(Sequelize, 'accounts', 'CASCADE'),
      email: { type: Sequelize.STRING(254), allowNull: false },
      email_normalized: { type: binaryString(254), allowNull: false },
      phone: { type: Sequelize.STRING(32), allowNull: true },
      first_name: { type: Sequelize.STRING(255), allowNull: true },
      last_name: { type: Sequelize.STRING(255), allowNull: true },
      // JSON as text, written by the service: MySQL 8's native JSON would reorder object keys
      // (customFields would not read back as written), and MariaDB's JSON is text anyway.
      tags: { type: Sequelize.TEXT, allowNull: false },
      custom_fields: { type: Sequelize.TEXT, allowNull: false },
      email_subscription_status: { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'subscribed' },
      whatsapp_subscription_status: { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'subscribed' },
      ...timestamps(Sequelize),
    }, tableOptions);
    await queryInterface.addIndex('contacts', ['account_id', 'email_normalized'], {
      unique: true,
      name: 'contacts_account_email_unique',
    });

    await queryInterface.createTable('sequences', {
      id,
      account_id: fk(Sequelize, 'accounts', 'CASCADE'),
      name: { type: Sequelize.STRING(255), allowNull: false },
      status: { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'draft' },
      ...timestamps(Sequelize),
    }, tableOptions);
    await queryInterface.addIndex('sequences', ['account_id'], { name: 'sequences_account_id' });

    await queryInterface.createTable('sequence_runs', {
      id,
      account_id: fk(Sequelize, 'accounts', 'CASCADE'),
      sequence_id: fk(Sequelize, 'sequences', 'CASCADE'),
      contact_id: fk(Sequelize, 'contacts', 'CASCADE'),
      status: { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'pending' },
      started_at: { type: Sequelize.DATE(3), allowNull: false },
      completed_at: { type: Sequelize.DATE(3), allowNull: true },
      ...timestamps(Sequelize),
    }, tableOptions);
    // Latest run of a contact in a sequence: newest created_at, ties broken by id.
    await queryInterface.addIndex('sequence_runs', ['sequence_id', 'contact_id', 'created_at', 'id'], {
      name: 'sequence_runs_latest',
    });

    // At most one active run per (contact, sequence), enforced by the database so that it holds
    // under any concurrency. MySQL/MariaDB have no partial indexes: a stored generated column
    // that is 1 while the run is active and NULL otherwise; NULLs never collide in a unique index.
    if (dialect === 'sqlite') {
      await queryInterface.sequelize.query(
        `CREATE UNIQUE INDEX sequence_runs_one_active ON sequence_runs (contact_id, sequence_id) WHERE status IN ${ACTIVE}`,
      );
      // Deleting a contact cascades to its runs; MySQL has the unique index above for that.
      await queryInterface.addIndex('sequence_runs', ['contact_id'], { name: 'sequence_runs_contact_id' });
      await queryInterface.sequelize.query(
        `CREATE INDEX sequence_runs_account_active ON sequence_runs (account_id) WHERE status IN ${ACTIVE}`,
      );
    } else {
      await queryInterface.sequelize.query(
        `ALTER TABLE sequence_runs ADD COLUMN active_flag TINYINT AS (CASE WHEN status IN ${ACTIVE} THEN 1 ELSE NULL END) STORED`,
      );
      await queryInterface.addIndex('sequence_runs', ['contact_id', 'sequence_id', 'active_flag'], {
        unique: true,
        name: 'sequence_runs_one_active',
      });
      await queryInterface.addIndex('sequence_runs', ['account_id', 'active_flag'], {
        name: 'sequence_runs_account_active',
      });
    }

    await queryInterface.createTable('enrollments', {
      id,
      account_id: fk(Sequelize, 'accounts', 'CASCADE'),
      sequence_id: fk(Sequelize, 'sequences', 'CASCADE'),
      status: { type: Sequelize.STRING(16), allowNull: false },
      total_contacts: { type: Sequelize.INTEGER, allowNull: false },
      successful_enrollments: { type: Sequelize.INTEGER, allowNull: false },
      failed_enrollments: { type: Sequelize.INTEGER, allowNull: false },
      skipped_duplicates: { type: Sequelize.INTEGER, allowNull: false },
      ...timestamps(Sequelize),
    }, tableOptions);
    await queryInterface.addIndex('enrollments', ['sequence_id'], { name: 'enrollments_sequence_id' });

    // One row per account with a run limit, locked while an enrollment counts and starts runs.
    // Not the accounts row itself: every insert into contacts, runs and enrollments takes a
    // shared lock on that through its foreign key, and would deadlock with the counter.
    await queryInterface.createTable(
      'run_limit_locks',
      { id: { type: Sequelize.UUID, primaryKey: true, allowNull: false } },
      tableOptions,
    );
  },

  async down(queryInterface) {
    for (const table of ['run_limit_locks', 'enrollments', 'sequence_runs', 'sequences', 'contacts', 'api_keys', 'accounts']) {
      await queryInterface.dropTable(table);
    }
  },
};
