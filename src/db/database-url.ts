// What DATABASE_URL names: an embedded SQLite file (or memory), or a MySQL server. Read by
// the service and by sequelize-cli's config (db/config.js), so both open the same database.
export type DatabaseTarget = { dialect: 'sqlite'; storage: string } | { dialect: 'mysql'; url: string };

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length).replace(/^\/\//, '');
    return { dialect: 'sqlite', storage: rest === '' || rest === ':memory:' ? ':memory:' : rest };
  }
  if (url.startsWith('mysql://')) return { dialect: 'mysql', url };
  throw new Error('DATABASE_URL must start with sqlite: or mysql://');
}
