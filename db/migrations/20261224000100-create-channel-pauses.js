'use strict';

// Channel pauses (issue 34): an account's channel, or one step's template, that stopped sending
// because the sender side failed (a refused login, an expired token, a template Graph does not
// take). Its sends stay queued and the dispatchers' claim passes over them (outbox.ts) until a
// resume deletes the row: the channel's settings saved, the step's sequence saved, or a probe
// that succeeds (engine/outbound/channel-pauses.ts).
//
// A table of its own rather than columns on email_channels / whatsapp_channels: an account that
// sends through the operator's SMTP_URL or WHATSAPP settings has no channel row, and a template
// pause is per (sequence, step), many per account.
//
// - scope: '' for the whole channel, `<sequence id>/<step id>` for one step's template;
//   channel_pauses_scope keeps one row per (account, channel, scope): two sends failing at once
//   both pause it, one row (and one channel.paused event) remains (INSERT that ignores the clash).
// - code, reason: what failed, in our words with its code (the event's, the banner's).
// - probe_at: when a probe (a login with no message) is next due, null for a template pause
//   (nothing to probe but a send); probe_attempt counts those that failed, for the schedule.
// The account's foreign key cascades.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    await queryInterface.createTable(
      'channel_pauses',
      {
        id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
        account_id: {
          type: Sequelize.UUID,
          allowNull: false,
          references: { model: 'accounts', key: 'id' },
          onDelete: 'CASCADE',
          onUpdate: 'CASCADE',
        },
        channel: { type: Sequelize.STRING(16), allowNull: false },
        scope: { type: Sequelize.STRING(200), allowNull: false, defaultValue: '' },
        sequence_id: { type: Sequelize.UUID, allowNull: true },
        step_id: { type: Sequelize.STRING(100), allowNull: true },
        code: { type: Sequelize.STRING(64), allowNull: false },
        reason: { type: Sequelize.STRING(500), allowNull: false },
        paused_at: { type: Sequelize.DATE(3), allowNull: false },
        probe_at: { type: Sequelize.DATE(3), allowNull: true },
        probe_attempt: { type: Sequelize.INTEGER, allowNull: false, defaultValue: 0 },
      },
      mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {},
    );
    await queryInterface.addIndex('channel_pauses', ['account_id', 'channel', 'scope'], { unique: true, name: 'channel_pauses_scope' });
    await queryInterface.addIndex('channel_pauses', ['probe_at'], { name: 'channel_pauses_probe' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('channel_pauses');
  },
};
