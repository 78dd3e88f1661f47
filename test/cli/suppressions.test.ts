import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/run-cli';
import { openDatabase } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { rebindModelsToTestDb } from '../support/db';

// docs/channels.md "Suppressions": the admin command line's suppression:* commands.

describe('admin command line: suppressions', () => {
  let dir: string;
  let databaseUrl: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'suppression-cli-'));
    databaseUrl = `sqlite:${path.join(dir, 'cli.sqlite')}`;
  });
  afterEach(() => rebindModelsToTestDb());
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { databaseUrl }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr, json: () => JSON.parse(stdout) };
  }

  async function stored(accountId: string) {
    const db = openDatabase(databaseUrl);
    try {
      return await select<{ channel: string; address: string; reason: string; source: string }>(db, 'SELECT channel, address, reason, source FROM suppressions WHERE account_id = ? ORDER BY address', [accountId]);
    } finally {
      await db.close();
    }
  }

  it('adds one address or a file of them, lists, gets and removes, with the source cli', async () => {
    const account = (await cli('account:create', '--name', 'Lists')).json();
    const one = await cli('suppression:add', '--account', account.id, '--channel', 'email', '--address', 'Ada@Example.com', '--reason', 'complaint');
    expect(one.code, one.stderr).to.equal(0);
    expect(one.json()).to.deep.equal({ summary: { total: 1, added: 1, existing: 0 } });
    const file = path.join(dir, 'numbers.txt');
    fs.writeFileSync(file, '# opted out at the till\n+49 151 1285 5001\n\n+44 7700 900123\n+4915112855001\n');
    const many = await cli('suppression:add', '--account', account.id, '--channel', 'whatsapp', '--file', file, '--reason', 'opt_out');
    expect(many.code, many.stderr).to.equal(0);
    expect(many.json()).to.deep.equal({ summary: { total: 3, added: 2, existing: 1 } });
    expect(await stored(account.id)).to.deep.equal([
      { channel: 'whatsapp', address: '+447700900123', reason: 'opt_out', source: 'cli' },
      { channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out', source: 'cli' },
      { channel: 'email', address: 'ada@example.com', reason: 'complaint', source: 'cli' },
    ]);

    const listed = await cli('suppression:list', '--account', account.id, '--channel', 'whatsapp', '--limit', '1');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.json().suppressions).to.have.length(1);
    const next = await cli('suppression:list', '--account', account.id, '--channel', 'whatsapp', '--limit', '1', '--cursor', listed.json().nextCursor);
    expect(next.json().suppressions).to.have.length(1);
    expect(next.json().suppressions[0].address).to.not.equal(listed.json().suppressions[0].address);

    const got = await cli('suppression:get', '--account', account.id, '--channel', 'email', '--address', 'ADA@example.com');
    expect(got.json()).to.deep.include({ channel: 'email', address: 'ada@example.com', reason: 'complaint', source: 'cli' });
    const removed = await cli('suppression:remove', '--account', account.id, '--channel', 'email', '--address', 'ada@example.com');
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.json().removed).to.deep.include({ address: 'ada@example.com' });
    const gone = await cli('suppression:get', '--account', account.id, '--channel', 'email', '--address', 'ada@example.com');
    expect(gone.code).to.equal(2);
    expect(gone.stderr).to.equal('error: Suppression not found\n');
    expect((await cli('suppression:remove', '--account', account.id, '--channel', 'email', '--address', 'ada@example.com')).code).to.equal(2);
  });

  it('refuses bad input with exit code 2, naming the flag or the file\'s address, and writes nothing', async () => {
    const account = (await cli('account:create', '--name', 'Refused')).json();
    const bad = await cli('suppression:add', '--account', account.id, '--channel', 'email', '--address', 'not-an-address');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.equal('error: --address: Invalid email address\n');
    const file = path.join(dir, 'mixed.txt');
    fs.writeFileSync(file, 'good@example.com\nbroken\n');
    const mixed = await cli('suppression:add', '--account', account.id, '--channel', 'email', '--file', file);
    expect(mixed.code).to.equal(2);
    expect(mixed.stderr).to.equal('error: --file: "broken": Invalid email address\n');
    const both = await cli('suppression:add', '--account', account.id, '--channel', 'email');
    expect(both.code).to.equal(2);
    expect(both.stderr).to.contain('give --address or --file');
    const channel = await cli('suppression:add', '--account', account.id, '--channel', 'sms', '--address', 'a@example.com');
    expect(channel.code).to.equal(2);
    expect(channel.stderr).to.match(/^error: --channel: /);
    const reason = await cli('suppression:list', '--account', account.id, '--reason', 'bored');
    expect(reason.code).to.equal(2);
    expect(reason.stderr).to.match(/^error: --reason: /);
    expect(await stored(account.id)).to.deep.equal([]);
  });
});
