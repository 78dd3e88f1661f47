'use strict';

// sequelize-cli's view of the database: the service's own configuration (src/config.ts), so
// DATABASE_URL and its default mean the same to both.
require('tsx/cjs');
const { loadConfig } = require('../src/config.ts');
const { parseDatabaseUrl } = require('../src/db/database-url.ts');

const target = parseDatabaseUrl(loadConfig().databaseUrl);
const config =
  target.dialect === 'sqlite'
    ? { dialect: 'sqlite', storage: target.storage }
    : { dialect: 'mysql', url: target.url, timezone: '+00:00', dialectOptions: { charset: 'utf8mb4' } };

module.exports = { development: config, test: config, production: config };
