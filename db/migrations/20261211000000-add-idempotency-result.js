'use strict';

// Idempotency-Key, exactly once (issue 27, 12): an operation that enrolls (trigger, enroll by
// email, enroll by ids, unenroll) writes its result on the key's row in its own transaction,
// the one that starts or ends the runs. A retry after a crash, or after a 503 whose COMMIT may
// have been applied, finds either the runs and their result, or neither: with a result, it is
// answered from it and nothing runs again (src/services/idempotency/key-in-transaction.ts).
// operation_result is the service's result as JSON, NULL until the operation commits.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.addColumn('idempotency_keys', 'operation_result', {
      type: mysql ? Sequelize.TEXT('long') : Sequelize.TEXT,
      allowNull: true,
    });
  },

  async down(queryInterface) {
    await queryInterface.removeColumn('idempotency_keys', 'operation_result');
  },
};
