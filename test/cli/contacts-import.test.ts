import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/run-cli';
import { openDatabase } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { rebindModelsToTestDb } from '../support/db';

// docs/api.md "Importing contacts": the admin command line's contacts:import FILE, on a database
// and a DATA_DIR of its own.

describe('admin command line: contacts:import', () => {
  let dir: string;
  let databaseUrl: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cli-'));
    databaseUrl = `sqlite:${path.join(dir, 'cli.sqlite')}`;
  });
  afterEach(() => rebindModelsToTestDb());
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { databaseUrl, dataDir: dir }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr, json: () => JSON.parse(stdout) };
  }

  it('imports a file to its end and prints the import; a file without an email column is refused', async () => {
    const account = (await cli('account:create', '--name', 'Imports')).json();
    const file = path.join(dir, 'people.csv');
    fs.writeFileSync(file, 'Email,First name\nada@example.com,Ada\nnot-an-email,X\n');
    const done = await cli('contacts:import', file, '--account', account.id, '--tags', 'imported');
    expect(done.stderr).to.equal('');
    expect(done.code).to.equal(0);
    expect(done.json().import).to.include({ status: 'completed', rows: 2, inserted: 1, failed: 1, fileName: 'people.csv' });

    const db = openDatabase(databaseUrl);
    try {
      const rows = await select<{ email: string; first_name: string; tags: string }>(db, 'SELECT email, first_name, tags FROM contacts WHERE account_id = ?', [account.id]);
      expect(rows).to.deep.equal([{ email: 'ada@example.com', first_name: 'Ada', tags: '["imported"]' }]);
    } finally {
      await db.close();
    }
    expect(fs.readdirSync(path.join(dir, 'imports'))).to.deep.equal([]);

    fs.writeFileSync(file, 'name\nAda\n');
    const refused = await cli('contacts:import', file, '--account', account.id);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/^error: No column maps to email/);
    const missing = await cli('contacts:import', path.join(dir, 'nope.csv'), '--account', account.id);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/cannot read/);
  });
});
