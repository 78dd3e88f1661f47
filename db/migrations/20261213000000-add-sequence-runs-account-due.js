'use strict';

// A fair claim (issue 27, item 6): one account's burst must not hold back another account's due
// runs. The claim reads the head of sequence_runs_due (due order, all accounts) as before; when
// that head fills a whole batch, it also asks a slice of the accounts whether each has runs due,
// and takes each one's share of its own earliest (src/services/engine/run-queue.ts,
// due-accounts.ts). Both go through one index:
// - due_account: the run's account while it has a due time, NULL otherwise (ended, paused, set
//   aside, a sequence without steps). A generated column, VIRTUAL: nothing writes it, adding it
//   copies no table, and only the index stores it.
// - sequence_runs_account_due (due_account, due_at): an account's earliest due run is the first
//   entry of its range, one look-up. On (account_id, due_at) the same question would walk past
//   every run of the account that has no due time (NULLs sort first): its whole history.
// MariaDB refuses an indexed generated column whose value could depend on the sql_mode: a CHAR
// column read as it is depends on PAD_CHAR_TO_FULL_LENGTH, so the account id is read through
// RTRIM (a UUID has no trailing spaces: the value is the same).

module.exports = {
  async up(queryInterface) {
    const { sequelize } = queryInterface;
    if (sequelize.getDialect() === 'sqlite') {
      await sequelize.query(
        'ALTER TABLE sequence_runs ADD COLUMN due_account TEXT GENERATED ALWAYS AS (CASE WHEN due_at IS NULL THEN NULL ELSE account_id END) VIRTUAL',
      );
    } else {
      await sequelize.query(
        `ALTER TABLE sequence_runs ADD COLUMN due_account CHAR(36) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
           AS (CASE WHEN due_at IS NULL THEN NULL ELSE RTRIM(account_id) END) VIRTUAL`,
      );
    }
    await sequelize.query('CREATE INDEX sequence_runs_account_due ON sequence_runs (due_account, due_at)');
  },

  async down(queryInterface) {
    const { sequelize } = queryInterface;
    await sequelize.query(sequelize.getDialect() === 'sqlite' ? 'DROP INDEX sequence_runs_account_due' : 'DROP INDEX sequence_runs_account_due ON sequence_runs');
    await sequelize.query('ALTER TABLE sequence_runs DROP COLUMN due_account');
  },
};
