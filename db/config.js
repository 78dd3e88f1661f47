'use strict';

// sequelize-cli's view of the database: DATABASE_URL as the service reads it (src/config.ts),
// the embedded SQLite file when it is unset.
const url = process.env.DATABASE_URL || 'sqlite:data/service.sqlite';

function fromUrl(value) {
  if (value.startsWith('sqlite:')) {
    const storage = value.slice('sqlite:'.length).replace(/^\/\//, '') || ':memory:';
    return { dialect: 'sqlite', storage };
  }
  return { url: value, dialect: 'mysql', timezone: '+00:00', dialectOptions: { charset: 'utf8mb4' } };
}

const config = fromUrl(url);
module.exports = { development: config, test: config, production: config };
