'use strict';

// The dashboard's people (issue 11), apart from API keys: users of an account, one-time setup
// tokens (how a user sets a password) and sign-in sessions. Tokens and session cookies are
// random values of which only the SHA-256 is stored, as with API keys.

module.exports = {
  async up(queryInterface, Sequelize) {
    const mysql = queryInterface.sequelize.getDialect() !== 'sqlite';
    const tableOptions = mysql ? { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
    const cascadeTo = (model) => ({
      type: Sequelize.UUID,
      allowNull: false,
      references: { model, key: 'id' },
      onDelete: 'CASCADE',
      onUpdate: 'CASCADE',
    });

    await queryInterface.createTable('users', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      account_id: cascadeTo('accounts'),
      // Lower-cased and trimmed: one person signs in with one email across the service.
      email: { type: Sequelize.STRING(254), allowNull: false },
      // scrypt (node:crypto) with its parameters and salt; NULL until the setup link is used.
      password_hash: { type: Sequelize.STRING(255), allowNull: true },
      active: { type: Sequelize.BOOLEAN, allowNull: false, defaultValue: true },
      last_login_at: { type: Sequelize.DATE(3), allowNull: true },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
      updated_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('users', ['email'], { unique: true, name: 'users_email_unique' });
    await queryInterface.addIndex('users', ['account_id'], { name: 'users_account_id' });

    await queryInterface.createTable('user_setup_tokens', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      user_id: cascadeTo('users'),
      token_hash: { type: Sequelize.CHAR(64), allowNull: false },
      expires_at: { type: Sequelize.DATE(3), allowNull: false },
      used_at: { type: Sequelize.DATE(3), allowNull: true },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('user_setup_tokens', ['token_hash'], { unique: true, name: 'user_setup_tokens_hash_unique' });
    await queryInterface.addIndex('user_setup_tokens', ['user_id'], { name: 'user_setup_tokens_user_id' });

    await queryInterface.createTable('user_sessions', {
      id: { type: Sequelize.UUID, primaryKey: true, allowNull: false },
      user_id: cascadeTo('users'),
      token_hash: { type: Sequelize.CHAR(64), allowNull: false },
      // Idle expiry, pushed forward while the session is used; never past expires_at.
      idle_expires_at: { type: Sequelize.DATE(3), allowNull: false },
      // Absolute expiry, fixed at sign-in.
      expires_at: { type: Sequelize.DATE(3), allowNull: false },
      created_at: { type: Sequelize.DATE(3), allowNull: false },
    }, tableOptions);
    await queryInterface.addIndex('user_sessions', ['token_hash'], { unique: true, name: 'user_sessions_hash_unique' });
    await queryInterface.addIndex('user_sessions', ['user_id'], { name: 'user_sessions_user_id' });
  },

  async down(queryInterface) {
    await queryInterface.dropTable('user_sessions');
    await queryInterface.dropTable('user_setup_tokens');
    await queryInterface.dropTable('users');
  },
};
