'use strict';

// The sequences list hides archived sequences unless asked for them (issue 26): its default
// page walks the account's sequences that are not archived, newest first. An index of exactly
// those rows, in the list's order, so that archived sequences cost the walk nothing however
// many pile up (walking (account_id, created_at, id) and skipping archived rows would read
// every archived sequence newer than the page).
// - SQLite: a partial index over (account_id, created_at, id) where status <> 'archived'; the
//   list's query repeats that predicate, as SQLite needs to use it.
// - MySQL/MariaDB have no partial indexes: a stored generated column listed_flag, 1 while the
//   sequence is not archived and NULL once it is, as an equality in front of the order (as
//   sequence_runs' active_flag, 20261121000000-create-schema.js). Nothing writes it.
// `status=archived` keeps using (account_id, status, created_at, id).

const NAME = 'sequences_account_listed_created';

module.exports = {
  async up(queryInterface) {
    const { sequelize } = queryInterface;
    if (sequelize.getDialect() === 'sqlite') {
      await sequelize.query(`CREATE INDEX ${NAME} ON sequences (account_id, created_at, id) WHERE status <> 'archived'`);
      return;
    }
    await sequelize.query(
      "ALTER TABLE sequences ADD COLUMN listed_flag TINYINT AS (CASE WHEN status <> 'archived' THEN 1 ELSE NULL END) STORED",
    );
    await queryInterface.addIndex('sequences', ['account_id', 'listed_flag', 'created_at', 'id'], { name: NAME });
  },

  async down(queryInterface) {
    await queryInterface.removeIndex('sequences', NAME);
    if (queryInterface.sequelize.getDialect() !== 'sqlite') await queryInterface.removeColumn('sequences', 'listed_flag');
  },
};
