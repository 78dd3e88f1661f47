'use strict';

// sequelize-cli's view of the database: the service's own configuration (src/config.ts), so
// DATABASE_URL and its default mean the same to both.
// The sources through tsx where it is installed (development); the compiled build elsewhere.
const fromSources = (() => {
  try {
    require('tsx/cjs');
    return true;
  } catch {
    return false;
  }
})();
const { loadConfig } = require(fromSources ? '../src/config.ts' : '../dist/config.js');
const { parseDatabaseUrl } = require(fromSources ? '../src/db/database-url.ts' : '../dist/db/database-url.js');

const target = parseDatabaseUrl(loadConfig().databaseUrl);
const config =
  target.dialect === 'sqlite'
    ? { dialect: 'sqlite', storage: target.storage }
    : { dialect: 'mysql', url: target.url, timezone: '+00:00', dialectOptions: { charset: 'utf8mb4' } };

module.exports = { development: config, test: config, production: config };
