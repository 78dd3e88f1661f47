'use strict';

// The read side (issue 9): every list is a keyset walk of one index, so that a page costs the
// same at 10k contacts as at 1M, whatever the filter.
//
// contacts (all prefixed by account_id, ties broken by id in the sort's direction):
// - (created_at, id) and (updated_at, id): the two sorts, unfiltered; createdAfter and
//   updatedSince are ranges on them.
// - (email_subscription_status, created_at, id) and (whatsapp_subscription_status, created_at,
//   id): a status filter is an equality in front of the default order, so the walk stays in
//   order and reads only matching rows, however rare `unsubscribed` is. With sort=updatedAt
//   the status is checked along the (updated_at, id) walk instead: two more indexes cost every
//   contact write more than they saved (the contention tests timed out under load with them).
//   The other filters of a combined query are checked on the rows the walk reads.
// - q (a case-insensitive prefix of the email) was, as this migration left it, a range on the
//   existing unique (account_id, email_normalized) index, its matches sorted into the list's
//   order: a cost that follows the number of matches, which grows with the account. Since
//   20261207000000-create-contact-email-prefixes.js a short q walks a mirror of email prefixes
//   in the list's order, as a tag walks contact_tags (that migration has the design). (Walking
//   the order's index and checking the prefix has no bound: when the matches all lie at the far
//   end of the order, as with emails numbered in creation order, a page reads most of the
//   account.)
// Each query names its index (FORCE INDEX / INDEXED BY): left to itself, MariaDB may read an
// order index through the account prefix from its start and filter up to the cursor.
//
// contact_tags: one row per (contact, tag), written in the transaction that writes the contact
// (src/services/contacts/contact-tags.ts), set-based. It carries the contact's account,
// created_at and updated_at, so that a tag filter is a walk of (account_id, tag, <sort>,
// contact_id) in the list's own order, joined to contacts by primary key: no read of contacts
// that lack the tag. The tag is compared byte for byte (as the service dedupes tags: `VIP` and
// `vip` are two tags). Existing contacts' tags are copied in here, in one statement.
//
// sequences: (account_id, created_at, id) and (account_id, status, created_at, id).
// sequence_runs: (sequence_id, created_at, id) and (contact_id, created_at, id) for the two run
// lists; a sequence's runs by status and by "active" have an equality in front of the order as
// well (status; MySQL's generated active_flag, SQLite's partial index). A contact's runs are
// few (one active per sequence, the history behind): filtered along the contact's walk.

async function addIndexes(queryInterface, table, indexes) {
  for (const [name, columns] of Object.entries(indexes)) await queryInterface.addIndex(table, columns, { name });
}

module.exports = {
  async up(queryInterface, Sequelize) {
    const { sequelize } = queryInterface;
    const mysql = sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};

    await addIndexes(queryInterface, 'contacts', {
      contacts_account_created: ['account_id', 'created_at', 'id'],
      contacts_account_updated: ['account_id', 'updated_at', 'id'],
      contacts_account_email_status_created: ['account_id', 'email_subscription_status', 'created_at', 'id'],
      contacts_account_whatsapp_status_created: ['account_id', 'whatsapp_subscription_status', 'created_at', 'id'],
    });

    await queryInterface.createTable('contact_tags', {
      contact_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      tag: {
        type: mysql ? 'VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin' : Sequelize.STRING(64),
        primaryKey: true,
        allowNull: false,
      },
      account_id: { type: Sequelize.UUID, allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await addIndexes(queryInterface, 'contact_tags', {
      contact_tags_account_tag_created: ['account_id', 'tag', 'created_at', 'contact_id'],
      contact_tags_account_tag_updated: ['account_id', 'tag', 'updated_at', 'contact_id'],
    });
    await sequelize.query(
      mysql
        ? `INSERT INTO contact_tags (contact_id, tag, account_id, created_at, updated_at)
           SELECT c.id, t.tag, c.account_id, c.created_at, c.updated_at
             FROM contacts c, JSON_TABLE(c.tags, '$[*]' COLUMNS (tag VARCHAR(64) PATH '$')) t`
        : `INSERT INTO contact_tags (contact_id, tag, account_id, created_at, updated_at)
           SELECT c.id, t.value, c.account_id, c.created_at, c.updated_at FROM contacts c, json_each(c.tags) t`,
    );

    await addIndexes(queryInterface, 'sequences', {
      sequences_account_created: ['account_id', 'created_at', 'id'],
      sequences_account_status_created: ['account_id', 'status', 'created_at', 'id'],
    });

    await addIndexes(queryInterface, 'sequence_runs', {
      sequence_runs_sequence_created: ['sequence_id', 'created_at', 'id'],
      sequence_runs_sequence_status_created: ['sequence_id', 'status', 'created_at', 'id'],
      sequence_runs_contact_created: ['contact_id', 'created_at', 'id'],
    });
    if (mysql) {
      await queryInterface.addIndex('sequence_runs', ['sequence_id', 'active_flag', 'created_at', 'id'], {
        name: 'sequence_runs_sequence_active_created',
      });
    } else {
      await sequelize.query(
        "CREATE INDEX sequence_runs_sequence_active_created ON sequence_runs (sequence_id, created_at, id) WHERE status IN ('pending','running','paused')",
      );
    }
  },

  async down(queryInterface) {
    await queryInterface.dropTable('contact_tags');
    for (const name of [
      'sequence_runs_sequence_active_created',
      'sequence_runs_sequence_created',
      'sequence_runs_sequence_status_created',
      'sequence_runs_contact_created',
    ]) {
      await queryInterface.removeIndex('sequence_runs', name);
    }
    for (const name of ['sequences_account_created', 'sequences_account_status_created']) {
      await queryInterface.removeIndex('sequences', name);
    }
    for (const suffix of ['created', 'updated', 'email_status_created', 'whatsapp_status_created']) {
      await queryInterface.removeIndex('contacts', `contacts_account_${suffix}`);
    }
  },
};
