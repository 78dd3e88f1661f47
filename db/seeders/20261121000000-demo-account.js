'use strict';

// The demo data a first `npm start` creates on an empty database: an account, an API key and
// an active sequence with steps (it waits 30 s, then tags the contact "welcomed"), so that the
// first run a newcomer triggers is seen to move. Also runnable with `npx sequelize-cli db:seed:all`.
// Keys follow the service's format (src/services/api-keys.ts): "svc_" + 40 lower-case hex from
// a CSPRNG; only the SHA-256 and the first 8 characters are stored.

const { createHash, randomBytes, randomUUID } = require('node:crypto');

module.exports = {
  // options.quiet: the service calls this itself and prints the key in its own welcome text.
  async up(queryInterface, _Sequelize, options = {}) {
    const now = new Date();
    const accountId = randomUUID();
    const sequenceId = randomUUID();
    const key = `svc_${randomBytes(20).toString('hex')}`;
    await queryInterface.bulkInsert('accounts', [
      { id: accountId, name: 'Demo account', max_active_runs: null, created_at: now, updated_at: now },
    ]);
    await queryInterface.bulkInsert('api_keys', [
      {
        id: randomUUID(),
        account_id: accountId,
        name: 'Demo key',
        key_hash: createHash('sha256').update(key).digest('hex'),
        key_prefix: key.slice(0, 8),
        active: true,
        expires_at: null,
        last_used_at: null,
        created_at: now,
        updated_at: now,
      },
    ]);
    await queryInterface.bulkInsert('sequences', [
      { id: sequenceId, account_id: accountId, name: 'Welcome series', status: 'active', version: 1, created_at: now, updated_at: now },
    ]);
    const steps = [
      { id: 'welcome-wait', type: 'wait', duration: 'PT30S' },
      { id: 'welcomed', type: 'tag', add: ['welcomed'] },
    ];
    await queryInterface.bulkInsert('sequence_versions', [
      { id: randomUUID(), account_id: accountId, sequence_id: sequenceId, version: 1, steps: JSON.stringify(steps), created_at: now },
    ]);
    if (!options.quiet) {
      // The key is printed, as it is never shown again.
      process.stdout.write(`demo account ${accountId}, sequence ${sequenceId}, API key ${key}\n`);
    }
    return { accountId, sequenceId, key };
  },

  async down(queryInterface) {
    await queryInterface.bulkDelete('accounts', { name: 'Demo account' });
  },
};
