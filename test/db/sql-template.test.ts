import { expect } from 'chai';
import { sqlTemplate } from '../../src/db/sql-template';

// What debug logging shows of a statement: its shape, none of its values. Sequelize inlines
// replacements, escaping quotes with a backslash on MySQL and by doubling them on SQLite.

describe('sqlTemplate', () => {
  it('replaces string and number literals, and keeps identifiers, placeholders and the transaction id', () => {
    const sql =
      "Executing (3f2a9c1e-1234-4567-8901-23456789abcd): SELECT `id`, t1.name FROM `contacts` AS t1 WHERE `account_id` = 'a1b2' AND email_normalized IN ('ada@example.com', 'bo@example.com') AND n > 42 AND x = $1 LIMIT 100";
    expect(sqlTemplate(sql, 'mysql')).to.equal(
      'Executing (3f2a9c1e-1234-4567-8901-23456789abcd): SELECT `id`, t1.name FROM `contacts` AS t1 WHERE `account_id` = ? AND email_normalized IN (?, ?) AND n > ? AND x = $1 LIMIT ?',
    );
  });

  it('reads MySQL escapes: a value with \\\' or \\\\ inside stays hidden whole', () => {
    const sql = "UPDATE contacts SET first_name = 'O\\'Brien', custom_fields = '{\\\"note\\\":\\\"a\\\\\\\\\\\"}', phone = '+44 7700' WHERE id = 'x'";
    const template = sqlTemplate(sql, 'mysql');
    expect(template).to.equal('UPDATE contacts SET first_name = ?, custom_fields = ?, phone = ? WHERE id = ?');
  });

  it('reads SQLite quoting: a value ending in a backslash does not open the next value', () => {
    // SQLite escapes nothing but the quote: 'tail\' is a whole literal, and 'secret' another.
    const sql = "INSERT INTO contacts (first_name, last_name) VALUES ('tail\\', 'secret-name'), ('it''s', X'DEADBEEF')";
    const template = sqlTemplate(sql, 'sqlite');
    expect(template).to.equal('INSERT INTO contacts (first_name, last_name) VALUES (?, ?), (?, ?)');
    expect(template).to.not.include('secret');
  });

  it('hides everything after a literal that never closes', () => {
    expect(sqlTemplate("SELECT 1 FROM t WHERE a = 'never closed, ada@example.com", 'mysql')).to.equal('SELECT ? FROM t WHERE a = ?');
  });

  it('hides double-quoted values too', () => {
    expect(sqlTemplate('SELECT * FROM t WHERE email = "ada@example.com"', 'mysql')).to.equal('SELECT * FROM t WHERE email = ?');
  });
});
