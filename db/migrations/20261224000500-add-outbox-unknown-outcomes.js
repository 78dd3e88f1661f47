'use strict';

// Issue 34 (section 2): an email whose final dot was written and whose reply never came (a
// timeout, a lost connection, a stop) has an unknown outcome: the relay may have it. It is sent
// again at most once; a second unknown outcome records the message `unconfirmed` and the run
// goes on. The count lives on the send (its outbox row, kept across every retry, stop and
// pause) and is read under the row's lock by the record of outcomes, so two records can never
// both decide "first".
// - outbox.unknown_outcomes: attempts of this send whose outcome was unknown (0 for rows already there).

module.exports = {
  async up(queryInterface, Sequelize) {
    await queryInterface.addColumn('outbox', 'unknown_outcomes', { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 });
  },

  async down(queryInterface) {
    await queryInterface.removeColumn('outbox', 'unknown_outcomes');
  },
};
