import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../src/cli/run-cli';
import { select } from '../../src/db/sql/statements';
import { completeSetup, createUser, SETUP_LINK_INVALID, SETUP_LINK_TTL_MS } from '../../src/services/dashboard/users';
import { verifyPassword } from '../../src/services/dashboard/passwords';
import { rebindModelsToTestDb, testDb } from '../support/db';
import { buildAccount } from '../support/factories';
import { dashboardApp, mutate, PASSWORD, query, signInCookie } from '../support/dashboard';

// Users and their one-time setup links: the services, the setup procedure, and the CLI.

async function rejection(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('dashboard users and setup links', () => {
  it('stores a scrypt hash, never the password, and the link works once', async () => {
    const account = await buildAccount();
    const { user, setupToken } = await createUser(testDb(), { accountId: account.id, email: ' Ada@Example.com ' });
    expect(user).to.include({ email: 'ada@example.com', passwordSet: false, active: true });
    expect(await completeSetup(testDb(), { token: setupToken, password: PASSWORD })).to.deep.equal({ email: 'ada@example.com' });
    const [row] = await select<{ password_hash: string }>(testDb(), 'SELECT password_hash FROM users', []);
    expect(row.password_hash).to.match(/^scrypt\$16384\$8\$1\$/).and.not.include(PASSWORD);
    expect(await verifyPassword(PASSWORD, row.password_hash)).to.equal(true);
    expect((await rejection(completeSetup(testDb(), { token: setupToken, password: 'another long password' }))).message).to.equal(SETUP_LINK_INVALID);
    expect(await verifyPassword(PASSWORD, (await select<{ password_hash: string }>(testDb(), 'SELECT password_hash FROM users', []))[0].password_hash)).to.equal(true);
  });

  it('lets one of two simultaneous uses of a link through', async () => {
    const account = await buildAccount();
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'ada@example.com' });
    const results = await Promise.allSettled([
      completeSetup(testDb(), { token: setupToken, password: 'first long password' }),
      completeSetup(testDb(), { token: setupToken, password: 'second long password' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
  });

  it('refuses a link after 24 hours', async () => {
    const account = await buildAccount();
    const issued = new Date(Date.now() - SETUP_LINK_TTL_MS - 1000);
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'ada@example.com' }, issued);
    expect((await rejection(completeSetup(testDb(), { token: setupToken, password: PASSWORD }))).message).to.equal(SETUP_LINK_INVALID);
  });

  it('refuses a second user with the same email, and a user for an unknown account', async () => {
    const account = await buildAccount();
    await createUser(testDb(), { accountId: account.id, email: 'ada@example.com' });
    expect((await rejection(createUser(testDb(), { accountId: account.id, email: 'ADA@example.com' }))).message).to.equal('A user with this email exists');
    expect((await rejection(createUser(testDb(), { accountId: '00000000-0000-4000-8000-000000000000', email: 'b@example.com' }))).message).to.equal('Account not found');
  });

  it('sets the password over HTTP: under 12 characters is a field error and spends nothing', async () => {
    const app = dashboardApp();
    const account = await buildAccount();
    const { setupToken } = await createUser(testDb(), { accountId: account.id, email: 'ada@example.com' });
    const short = await mutate(app, 'dashboard.auth.setup', { token: setupToken, password: 'short pass' });
    expect(short.status).to.equal(400);
    expect(short.body.error.data.details).to.deep.equal([{ path: 'password', message: 'must be at least 12 characters' }]);
    const done = await mutate(app, 'dashboard.auth.setup', { token: setupToken, password: PASSWORD });
    expect(done.status).to.equal(200);
    // Setting the password signed its person in: the answer's cookie is a session.
    const cookie = ([] as string[]).concat(done.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    expect((await query(app, 'dashboard.auth.me', cookie)).body.result.data).to.deep.include({ email: 'ada@example.com', accountId: account.id });
    await signInCookie(app, 'ada@example.com');
    const again = await mutate(app, 'dashboard.auth.setup', { token: setupToken, password: PASSWORD });
    expect(again.status).to.equal(400);
    expect(again.body.error.message).to.equal(SETUP_LINK_INVALID);
  });

  describe('the command line', () => {
    let dir: string;
    let databaseUrl: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-users-'));
      databaseUrl = `sqlite:${path.join(dir, 'cli.sqlite')}`;
    });
    afterEach(() => {
      rebindModelsToTestDb();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    async function cli(argv: string[], publicBaseUrl?: string) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(argv, { databaseUrl, publicBaseUrl }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
      return { code, stdout, stderr, json: code === 0 ? JSON.parse(stdout) : undefined };
    }

    it('user:create prints { id, email, setupUrl }; user:list shows the user; user:disable turns them off', async () => {
      const account = (await cli(['account:create', '--name', 'Acme'])).json;
      const created = await cli(['user:create', '--account', account.id, '--email', 'Ada@Example.com'], 'https://svc.example.com/');
      expect(created.code).to.equal(0);
      expect(Object.keys(created.json)).to.deep.equal(['id', 'email', 'setupUrl']);
      expect(created.json.email).to.equal('ada@example.com');
      expect(created.json.setupUrl).to.match(/^https:\/\/svc\.example\.com\/dashboard\/setup\?token=[A-Za-z0-9_-]{43}$/);
      const listed = (await cli(['user:list', '--account', account.id])).json;
      expect(listed).to.have.length(1);
      expect(listed[0]).to.include({ id: created.json.id, email: 'ada@example.com', active: true, passwordSet: false, lastLoginAt: null });
      const disabled = (await cli(['user:disable', '--id', created.json.id])).json;
      expect(disabled.active).to.equal(false);
    });

    it('defaults the setup link to http://localhost:PORT, and refuses a bad email or a taken one', async () => {
      const account = (await cli(['account:create', '--name', 'Acme'])).json;
      const created = await cli(['user:create', '--account', account.id, '--email', 'ada@example.com'], 'http://localhost:3000');
      expect(created.json.setupUrl).to.match(/^http:\/\/localhost:3000\/dashboard\/setup\?token=/);
      const bad = await cli(['user:create', '--account', account.id, '--email', 'not-an-email']);
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/^error: --email: must be an email address/);
      const taken = await cli(['user:create', '--account', account.id, '--email', 'ADA@example.com']);
      expect(taken.code).to.equal(2);
      expect(taken.stderr).to.equal('error: A user with this email exists\n');
    });
  });
});
