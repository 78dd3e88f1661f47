import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { Database } from '../../src/db/database';
import { withTransaction } from '../../src/db/sql/transaction';
import { completeSetup, SETUP_LINK_INVALID } from '../../src/services/dashboard/users';
import { seedDemoIfEmpty } from '../../src/services/demo-seed';
import { api, silentLogger } from '../support/app';
import { cliOk, cliRefused, runCliOn, withDatabaseAt, type CliResult } from '../support/cli';
import { rebindModelsToTestDb, TEST_DATABASE_URL, testDb } from '../support/db';

// Recovering from a lost first start's output with the admin command line (docs/operations.md
// "Admin command line"): account:list and user:list find the demo account and its user without
// knowing any id, user:setup-link issues a new setup link, key:create a new key. Run in-process on
// a SQLite file of its own per test, as `npm run cli` runs on DATABASE_URL (test/cli/cli.test.ts).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SETUP_URL = /^http:\/\/localhost:3000\/dashboard\/setup\?token=([A-Za-z0-9_-]{43})$/;

let dir: string;
let databaseUrl: string;

function cli(...argv: string[]): Promise<CliResult> {
  return runCliOn(databaseUrl, argv);
}

// A command that must succeed: its JSON output, and the text it printed.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function ok(...argv: string[]): Promise<{ json: any; text: string }> {
  return cliOk(databaseUrl, argv);
}

function refused(...argv: string[]): Promise<string> {
  return cliRefused(databaseUrl, argv);
}

function withFileDb<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  return withDatabaseAt(databaseUrl, fn);
}

// The first start on an empty database, whose printed key and setup link were then lost.
async function firstStart() {
  await ok('account:list'); // brings the schema up to date, as the server's start does
  return withFileDb(async (db) => {
    const demo = await seedDemoIfEmpty(db);
    expect(demo).to.not.equal(null);
    return demo!;
  });
}

function setPassword(token: string) {
  return withFileDb((db) => completeSetup(db, { token, password: 'correct horse battery staple' }));
}

describe('admin command line: recovering the first key and setup link', () => {
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-recovery-'));
    databaseUrl = `sqlite:${path.join(dir, 'service.sqlite')}`;
  });

  afterEach(() => {
    rebindModelsToTestDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('account:list lists every account, oldest first, and no secret', async () => {
    expect((await ok('account:list')).json).to.deep.equal([]);
    const demo = await firstStart();
    const acme = (await ok('account:create', '--name', 'Acme', '--max-active-runs', '50')).json;

    const { json, text } = await ok('account:list');

    expect(json.map((a: { id: string }) => a.id)).to.deep.equal([demo.accountId, acme.id]);
    for (const account of json) {
      expect(account).to.have.all.keys('id', 'name', 'maxActiveRuns', 'createdAt');
      expect(account.id).to.match(UUID);
      expect(account.createdAt).to.match(ISO);
    }
    expect(json[1]).to.deep.equal(acme);
    expect(text).not.to.include(demo.key.slice(4));
    expect(text).not.to.include('svc_');
  });

  it('user:list without --account lists every account\'s users with their account, and no secret', async () => {
    const demo = await firstStart();
    const acme = (await ok('account:create', '--name', 'Acme')).json;
    const grace = (await ok('user:create', '--account', acme.id, '--email', 'grace@example.com')).json;

    const all = await ok('user:list');
    expect(all.json.map((u: { email: string; accountId: string }) => [u.email, u.accountId])).to.deep.equal([
      ['demo@example.com', demo.accountId],
      ['grace@example.com', acme.id],
    ]);
    for (const user of all.json) {
      expect(user).to.have.all.keys('id', 'accountId', 'email', 'active', 'passwordSet', 'createdAt', 'lastLoginAt');
      expect(user).to.include({ active: true, passwordSet: false, lastLoginAt: null });
    }
    expect(all.text).not.to.include(demo.setupToken);
    expect(all.text).not.to.include(new URL(grace.setupUrl).searchParams.get('token')!);

    const one = await ok('user:list', '--account', acme.id);
    expect(one.json.map((u: { email: string }) => u.email)).to.deep.equal(['grace@example.com']);
  });

  it('user:setup-link prints a new link that sets the password; the lost one no longer works', async () => {
    const demo = await firstStart();
    const [user] = (await ok('user:list')).json;

    const { json } = await ok('user:setup-link', '--id', user.id);

    expect(json).to.have.all.keys('id', 'email', 'setupUrl');
    expect(json).to.include({ id: user.id, email: 'demo@example.com' });
    const token = SETUP_URL.exec(json.setupUrl)?.[1];
    expect(token, json.setupUrl).to.be.a('string').and.not.equal(demo.setupToken);
    await withFileDb(async (db) => {
      const lost = await completeSetup(db, { token: demo.setupToken, password: 'correct horse battery staple' }).catch((e: Error) => e);
      expect((lost as Error).message).to.equal(SETUP_LINK_INVALID);
    });
    expect(await setPassword(token!)).to.deep.equal({ email: 'demo@example.com' });
    expect((await ok('user:list')).json[0].passwordSet).to.equal(true);
  });

  it('user:setup-link also resets a forgotten password, once per link', async () => {
    await firstStart();
    const [user] = (await ok('user:list')).json;
    const first = SETUP_URL.exec((await ok('user:setup-link', '--id', user.id)).json.setupUrl)![1];
    await setPassword(first);

    const again = SETUP_URL.exec((await ok('user:setup-link', '--id', user.id)).json.setupUrl)![1];
    expect(await setPassword(again)).to.deep.equal({ email: 'demo@example.com' });
    const reused = await setPassword(again).catch((e: Error) => e);
    expect((reused as Error).message).to.equal(SETUP_LINK_INVALID);
  });

  it('user:setup-link refuses an unknown user, a disabled one and a malformed id, writing nothing', async () => {
    await firstStart();
    const [user] = (await ok('user:list')).json;
    expect(await refused('user:setup-link', '--id', '00000000-0000-4000-8000-000000000000')).to.include('User not found');
    expect(await refused('user:setup-link', '--id', 'nope')).to.include('--id: must be a UUID');
    expect(await refused('user:setup-link')).to.include('--id: is required');
    await ok('user:disable', '--id', user.id);
    expect(await refused('user:setup-link', '--id', user.id)).to.include('disabled');
    const tokens = await withFileDb(async (db) => {
      const [rows] = await db.sequelize.query('SELECT COUNT(*) AS n FROM user_setup_tokens');
      return Number((rows as Array<{ n: number }>)[0].n);
    });
    expect(tokens).to.equal(1);
  });

  it('key:create on the account account:list found gives a key that works at once', async () => {
    const demo = await firstStart();
    const [account] = (await ok('account:list')).json;
    expect(account.id).to.equal(demo.accountId);

    const { key } = (await ok('key:create', '--account', account.id, '--name', 'Replacement')).json;

    const res = await withFileDb(async (db) => {
      const app = createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: silentLogger });
      const answer = await request(app).get(`/api/v1/sequences/${demo.sequenceId}`).set('x-api-key', key);
      // The key's last_used_at write follows the answer: let it finish before the file closes.
      await withTransaction(db, async () => undefined);
      return answer;
    });
    expect(res.status).to.equal(200);
    expect(res.body.sequence.id).to.equal(demo.sequenceId);
  });

  describe('on the service database', () => {
    // The test database itself when it is a server (MariaDB in CI); an in-memory SQLite
    // database cannot be shared with a second connection.
    const shared = !TEST_DATABASE_URL.startsWith('sqlite:');

    (shared ? it : it.skip)('finds the demo account and user, and gives a new key and link that work', async () => {
      databaseUrl = TEST_DATABASE_URL;
      const demo = (await seedDemoIfEmpty(testDb()))!;
      const [account] = (await ok('account:list')).json;
      const [user] = (await ok('user:list')).json;
      expect([account.id, user.accountId, user.email]).to.deep.equal([demo.accountId, demo.accountId, 'demo@example.com']);
      const { key } = (await ok('key:create', '--account', account.id, '--name', 'Replacement')).json;
      const token = SETUP_URL.exec((await ok('user:setup-link', '--id', user.id)).json.setupUrl)![1];
      rebindModelsToTestDb();

      expect((await api(key).get(`/sequences/${demo.sequenceId}`)).status).to.equal(200);
      expect(await completeSetup(testDb(), { token, password: 'correct horse battery staple' })).to.deep.equal({ email: 'demo@example.com' });
      const lost = await completeSetup(testDb(), { token: demo.setupToken, password: 'correct horse battery staple' }).catch((e: Error) => e);
      expect((lost as Error).message).to.equal(SETUP_LINK_INVALID);
    });
  });

  it('account:list takes no flags, and --help lists the recovery commands', async () => {
    expect(await refused('account:list', '--name', 'x')).to.include('unknown flag --name');
    const help = await cli('--help');
    expect(help.stdout).to.match(/^ {2}account:list$/m);
    expect(help.stdout).to.match(/^ {2}user:list \[--account ID\]$/m);
    expect(help.stdout).to.match(/^ {2}user:setup-link --id ID$/m);
  });
});
