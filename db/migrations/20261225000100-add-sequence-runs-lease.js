'use strict';

// Issue 35: a claim's lease in a column of its own, in no index. The claim used to write the
// lease into due_at, which two indexes hold (sequence_runs_due, sequence_runs_account_due): four
// index entries rewritten per run per claim, and again when the run's next due time was written.
// Now the claim writes claim_token and lease_until only; due_at keeps the run's due time, and
// the claim passes over runs whose lease is live ((claim_token IS NULL OR lease_until IS NULL OR
// lease_until <= now): a run claimed before this migration has lease_until NULL and its lease in
// due_at, which the claim's due_at <= now still honours).
// - sequence_runs.lease_until: until when the holder of claim_token has the run (NULL: none, or
//   a claim made before this migration).

module.exports = {
  async up(queryInterface, Sequelize) {
    await queryInterface.addColumn('sequence_runs', 'lease_until', { type: Sequelize.DATE(3), allowNull: true });
  },

  async down(queryInterface) {
    // SQLite: plain DROP COLUMN (3.35+); Sequelize's removeColumn rebuilds the table and fails
    // on the generated due_account column's index (as 20261213000100's down says).
    if (queryInterface.sequelize.getDialect() === 'sqlite') {
      await queryInterface.sequelize.query('ALTER TABLE sequence_runs DROP COLUMN lease_until');
      return;
    }
    await queryInterface.removeColumn('sequence_runs', 'lease_until');
  },
};
