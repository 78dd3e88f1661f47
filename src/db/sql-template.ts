import type { Dialect } from './dialect';

// Sequelize hands its logging callback the statement with the values already written in
// (replacements are inlined, and a key hash or a contact's email with them). What may be
// logged is the statement's shape: every string, hex or number literal becomes `?`.
// Identifiers (`quoted` or bare) and bind placeholders ($1) stay.
//
// The two dialects escape a quote differently: MySQL with a backslash (and ''), SQLite only
// by doubling it. Reading one with the other's rule would end a literal early and show the rest,
// so the dialect is given. A literal that never closes hides everything after it.
export function sqlTemplate(sql: string, dialect: Dialect): string {
  const backslashEscapes = dialect === 'mysql';
  // Sequelize's "Executing (<transaction id>): " prefix is kept as it is.
  const prefix = /^Executing \([\w-]*\): /.exec(sql)?.[0] ?? '';
  let out = prefix;
  let i = prefix.length;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = literalEnd(sql, i, c, backslashEscapes);
      // X'..', N'..', B'..' prefixes belong to the literal.
      if (/[xXnNbB]$/.test(out) && !isWordChar(out[out.length - 2])) out = out.slice(0, -1);
      out += '?';
      if (end < 0) return out;
      i = end + 1;
    } else if (c === '`') {
      const end = quotedIdentifierEnd(sql, i);
      if (end < 0) return `${out}?`;
      out += sql.slice(i, end + 1);
      i = end + 1;
    } else if (isDigit(c) && !isWordChar(sql[i - 1]) && sql[i - 1] !== '$' && sql[i - 1] !== '.') {
      let j = i + 1;
      while (j < sql.length && /[0-9a-fA-FxX.eE]/.test(sql[j])) j += 1;
      out += '?';
      i = j;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

// The index of the quote that closes the literal opened at `start`, or -1.
function literalEnd(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  for (let i = start + 1; i < sql.length; i += 1) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') {
      i += 1;
    } else if (c === quote) {
      if (sql[i + 1] !== quote) return i;
      i += 1;
    }
  }
  return -1;
}

function quotedIdentifierEnd(sql: string, start: number): number {
  for (let i = start + 1; i < sql.length; i += 1) {
    if (sql[i] === '`') {
      if (sql[i + 1] !== '`') return i;
      i += 1;
    }
  }
  return -1;
}

function isDigit(c: string) {
  return c >= '0' && c <= '9';
}

function isWordChar(c: string | undefined) {
  return c !== undefined && /[\p{L}\p{N}_]/u.test(c);
}
