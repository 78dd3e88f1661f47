// The two database families the service runs on: embedded SQLite, and MySQL 8 / MariaDB 10.6+
// (mysql2). Its own file so that the connection (database.ts) and the statement plumbing it
// installs (direct-statements.ts, sql-template.ts) can all name it without importing each other.
export type Dialect = 'sqlite' | 'mysql';
