'use strict';

// q (a case-insensitive prefix of the email) on the contact list, at a cost that does not grow
// with the account (issue 9). Until now q read the prefix's range of the (account_id,
// email_normalized) index and sorted its matches into the list's order: the cost followed the
// number of matches, which grows with the account (`q=l12` took 13× longer at 1M contacts than
// at 10k).
//
// contact_email_prefixes: one row per (contact, prefix) for the first 1..4 characters of the
// contact's email_normalized (fewer for a shorter email), with the contact's account,
// created_at and updated_at, kept in step in the transaction that writes the contact
// (src/services/contacts/contact-email-prefixes.ts), set-based, as contact_tags is. A q of at
// most 4 characters is then an equality in front of the list's order: a walk of (account_id,
// prefix, <sort>, contact_id) joined to contacts by primary key, exactly like a tag, reading
// only contacts that match. A longer q counts its matches in the email index, at most 200
// (a covering read); fewer than that are read from the email index and sorted (cost bounded by
// the 200); more are found by walking its first 4 characters' rows and checking the whole
// prefix on the joined contact (src/services/contacts/list-contacts.ts has the bound).
// Prefixes are counted in characters (code points), as LEFT/substr and the service count them,
// and compared byte for byte, as email_normalized is. Existing contacts' prefixes are copied in
// here, in one statement.
//
// (Generated prefix columns on contacts would need an index per length and sort on the table
// every contact write and every other list reads; the mirror keeps them apart, as the tags'.)

const PREFIX_LENGTHS = [1, 2, 3, 4];

async function addIndexes(queryInterface, table, indexes) {
  for (const [name, columns] of Object.entries(indexes)) await queryInterface.addIndex(table, columns, { name });
}

module.exports = {
  async up(queryInterface, Sequelize) {
    const { sequelize } = queryInterface;
    const mysql = sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};

    await queryInterface.createTable('contact_email_prefixes', {
      contact_id: {
        type: Sequelize.UUID,
        primaryKey: true,
        allowNull: false,
        references: { model: 'contacts', key: 'id' },
        onDelete: 'CASCADE',
        onUpdate: 'CASCADE',
      },
      prefix: {
        type: mysql ? 'VARCHAR(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin' : Sequelize.STRING(4),
        primaryKey: true,
        allowNull: false,
      },
      account_id: { type: Sequelize.UUID, allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await addIndexes(queryInterface, 'contact_email_prefixes', {
      contact_email_prefixes_account_prefix_created: ['account_id', 'prefix', 'created_at', 'contact_id'],
      contact_email_prefixes_account_prefix_updated: ['account_id', 'prefix', 'updated_at', 'contact_id'],
    });

    const lengths = PREFIX_LENGTHS.map((n) => `SELECT ${n} AS n`).join(' UNION ALL ');
    const [left, length] = mysql
      ? ['LEFT(c.email_normalized, n.n)', 'CHAR_LENGTH(c.email_normalized)']
      : ['substr(c.email_normalized, 1, n.n)', 'length(c.email_normalized)'];
    await sequelize.query(
      `INSERT INTO contact_email_prefixes (contact_id, prefix, account_id, created_at, updated_at)
       SELECT c.id, ${left}, c.account_id, c.created_at, c.updated_at
         FROM contacts c JOIN (${lengths}) n ON n.n <= ${length}`,
    );
  },

  async down(queryInterface) {
    await queryInterface.dropTable('contact_email_prefixes');
  },
};
