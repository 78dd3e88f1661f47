'use strict';

// Issue 36 section 5, engagement signals (docs/activities.md "Engagement signals",
// docs/channels.md "Open and click tracking").
//
// - email_channels.track_opens: the account's emails carry a 1x1 pixel on PUBLIC_BASE_URL/t/o/;
//   its first load records `email.opened`.
// - email_channels.track_clicks: the links of the steps that ask for it (`trackClicks: true`)
//   are rewritten to PUBLIC_BASE_URL/t/c/; a click records `email.clicked` and is redirected.
// Both off by default: nothing an account sent before changes, and tracking is the account's
// choice. The links' targets are kept in the message's own content (messages.content.links),
// so no table is added: the redirect reads the message its signed token names.

module.exports = {
  async up(queryInterface, Sequelize) {
    await queryInterface.addColumn('email_channels', 'track_opens', { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: false });
    await queryInterface.addColumn('email_channels', 'track_clicks', { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: false });
  },

  async down(queryInterface) {
    await queryInterface.removeColumn('email_channels', 'track_clicks');
    await queryInterface.removeColumn('email_channels', 'track_opens');
  },
};
