'use strict';

// A fair claim (issue 27, item 6): one account's burst must not hold back another account's due
// runs. The claim reads the head of sequence_runs_due (due order, all accounts) as before; when
// that head fills a whole batch, it also looks for the accounts that have due runs, and takes
// each one's share through this index (src/services/engine/run-queue.ts):
// - (account_id, due_at): the accounts with due runs, read a slice at a time by a loose index
//   scan on MariaDB ("Using index for group-by": one look-up per account, however many runs it
//   has) and by a walk of the index's distinct accounts on SQLite; then one account's earliest
//   due runs, a range read that stops at its share.
// Adding an index is in place on MariaDB (no table copy).

module.exports = {
  async up(queryInterface) {
    await queryInterface.addIndex('sequence_runs', ['account_id', 'due_at'], { name: 'sequence_runs_account_due' });
  },

  async down(queryInterface) {
    await queryInterface.removeIndex('sequence_runs', 'sequence_runs_account_due');
  },
};
