'use strict';

// Issue 36, section 7: caps across sequences (docs/channels.md "Frequency caps").
//
// - email_channels, whatsapp_channels: the account's frequency cap of the channel, set by PUT
//   /channels/email and /channels/whatsapp: at most frequency_cap_max marketing messages per
//   contact within any rolling frequency_cap_per (an ISO 8601 duration, as given), and what a
//   capped message does (frequency_cap_when: 'wait' or 'skip'). All NULL: no cap.
// - messages.category: the step's category when the message was queued, 'marketing' (the
//   default, and every message queued before this) or 'transactional'. The cap counts the
//   contact's marketing messages of a channel through messages_contact_created (contact_id
//   first), under the contact's lock.
// - sequence_runs.capped_until: the due time the engine gave a run it held back for its
//   contact's cap. A run shows `waitingFor: "frequency_cap"` while its due_at is still that
//   time and its step has not begun; any later move of due_at leaves it stale, and it is then
//   ignored, so no other writer needs to clear it. No index: read with the run's row only.

module.exports = {
  async up(queryInterface, Sequelize) {
    for (const table of ['email_channels', 'whatsapp_channels']) {
      await queryInterface.addColumn(table, 'frequency_cap_max', { type: Sequelize.INTEGER, allowNull: true });
      await queryInterface.addColumn(table, 'frequency_cap_per', { type: Sequelize.STRING(32), allowNull: true });
      await queryInterface.addColumn(table, 'frequency_cap_when', { type: Sequelize.STRING(8), allowNull: true });
    }
    await queryInterface.addColumn('messages', 'category', { type: Sequelize.STRING(16), allowNull: false, defaultValue: 'marketing' });
    await queryInterface.addColumn('sequence_runs', 'capped_until', { type: Sequelize.DATE(3), allowNull: true });
  },

  async down(queryInterface) {
    await queryInterface.sequelize.query('ALTER TABLE sequence_runs DROP COLUMN capped_until');
    await queryInterface.sequelize.query('ALTER TABLE messages DROP COLUMN category');
    for (const table of ['whatsapp_channels', 'email_channels']) {
      for (const column of ['frequency_cap_when', 'frequency_cap_per', 'frequency_cap_max']) {
        await queryInterface.sequelize.query(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      }
    }
  },
};
