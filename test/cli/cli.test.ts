import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import type { Database } from '../../src/db/database';
import { seedDemoIfEmpty } from '../../src/services/demo-seed';
import { select } from '../../src/db/sql/statements';
import { countAccounts } from '../../src/services/accounts';
import { listApiKeys } from '../../src/services/api-keys';
import { withTransaction } from '../../src/db/sql/transaction';
import { SEQUENCE_HAS_RUNS } from '../../src/services/sequences/delete-sequence';
import { enrollContact } from '../../src/services/sequences/enroll-contact';
import { api, silentLogger } from '../support/app';
import { cliOk, cliRefused, runCliOn, withDatabaseAt, type CliResult } from '../support/cli';
import { rebindModelsToTestDb, TEST_DATABASE_URL, testDb } from '../support/db';
import { buildAccount, buildApiKey } from '../support/factories';

// The admin command line (docs/decisions.md "Accounts, keys and sequences"), run in-process on a
// SQLite file of its own per test, as `npm run cli` runs it on DATABASE_URL.
// The CLI opens (and closes) its own Sequelize instance, and sequelize-typescript binds the
// model classes to the instance opened last: afterEach binds them back to the test database.

const KEY = /^svc_[0-9a-f]{40}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let dir: string;
let databaseUrl: string;
let databaseFile: string;

async function cli(...argv: string[]): Promise<CliResult> {
  return cliOn(databaseUrl, argv);
}

function cliOn(url: string, argv: string[]): Promise<CliResult> {
  return runCliOn(url, argv);
}

// A command that must succeed: its JSON output.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ok(...argv: string[]): Promise<any> {
  return (await cliOk(databaseUrl, argv)).json;
}

function refused(...argv: string[]): Promise<string> {
  return cliRefused(databaseUrl, argv);
}

function withFileDb<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  return withDatabaseAt(databaseUrl, fn);
}

async function counts(): Promise<Record<string, number>> {
  if (!fs.existsSync(databaseFile)) return { accounts: 0, api_keys: 0, sequences: 0 };
  return withFileDb(async (db) => {
    const result: Record<string, number> = {};
    for (const table of ['accounts', 'api_keys', 'sequences']) {
      const [{ count }] = await select<{ count: number | string }>(db, `SELECT COUNT(*) AS count FROM ${table}`, []);
      result[table] = Number(count);
    }
    return result;
  });
}

// The service on the CLI's database file: what a key created by the CLI is good for.
async function withAppOnFile<T>(fn: (app: ReturnType<typeof createApp>) => Promise<T>): Promise<T> {
  return withFileDb(async (db) => {
    const result = await fn(createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: silentLogger }));
    // A successful authentication queues a last_used_at write after the answer; let it finish
    // before the database is closed (SQLite runs transactions one at a time, in order).
    await withTransaction(db, async () => undefined);
    return result;
  });
}

describe('admin command line', () => {
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
    databaseFile = path.join(dir, 'nested', 'admin.sqlite');
    databaseUrl = `sqlite:${databaseFile}`;
  });

  afterEach(() => {
    rebindModelsToTestDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('on a fresh database', () => {
    it('creates the file, brings the schema up to date and runs the command', async () => {
      expect(fs.existsSync(databaseFile)).to.equal(false);
      const account = await ok('account:create', '--name', 'Acme');
      expect(fs.existsSync(databaseFile)).to.equal(true);
      // Every table of the schema is there, not only the one the command wrote to.
      const empty = await withFileDb(async (db) => {
        const totals: number[] = [];
        for (const table of ['contacts', 'sequences', 'sequence_runs', 'enrollments', 'api_keys']) {
          const [{ count }] = await select<{ count: number | string }>(db, `SELECT COUNT(*) AS count FROM ${table}`, []);
          totals.push(Number(count));
        }
        return totals;
      });
      expect(empty).to.deep.equal([0, 0, 0, 0, 0]);
      expect((await counts()).accounts).to.equal(1);
      expect(account.id).to.match(UUID);
    });
  });

  describe('accounts', () => {
    it('account:create prints the new account with no run limit by default', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      expect(account).to.include({ name: 'Acme', maxActiveRuns: null });
      expect(account.id).to.match(UUID);
      expect(account.createdAt).to.match(ISO);
    });

    it('account:create --max-active-runs sets the limit', async () => {
      const account = await ok('account:create', '--name', 'Acme', '--max-active-runs', '25');
      expect(account.maxActiveRuns).to.equal(25);
      const [row] = await withFileDb((db) =>
        select<{ max_active_runs: number | string }>(db, 'SELECT max_active_runs FROM accounts WHERE id = ?', [account.id]),
      );
      expect(Number(row.max_active_runs)).to.equal(25);
    });

    it('account:create trims the name', async () => {
      const account = await ok('account:create', '--name', '  Acme Ltd  ');
      expect(account.name).to.equal('Acme Ltd');
    });

    it('account:update sets a limit, and "none" removes it', async () => {
      const { id } = await ok('account:create', '--name', 'Acme');
      const limited = await ok('account:update', '--id', id, '--max-active-runs', '3');
      expect(limited).to.include({ id, maxActiveRuns: 3 });

      const unlimited = await ok('account:update', '--id', id, '--max-active-runs', 'none');
      expect(unlimited).to.include({ id, maxActiveRuns: null });
      const [row] = await withFileDb((db) =>
        select<{ max_active_runs: unknown }>(db, 'SELECT max_active_runs FROM accounts WHERE id = ?', [id]),
      );
      expect(row.max_active_runs).to.equal(null);
    });

    it('account:update accepts 0 as a limit', async () => {
      const { id } = await ok('account:create', '--name', 'Acme');
      expect((await ok('account:update', '--id', id, '--max-active-runs', '0')).maxActiveRuns).to.equal(0);
    });
  });

  describe('keys', () => {
    it('key:create prints the key, svc_ and 40 lower-case hex, with its id', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const created = await ok('key:create', '--account', account.id, '--name', 'Zapier');
      expect(created.key).to.match(KEY);
      expect(created.id).to.match(UUID);
      expect(created).to.include({ accountId: account.id, name: 'Zapier', kind: 'integration', active: true, expiresAt: null });
      expect(created.prefix).to.equal(created.key.slice(0, 8));
    });

    it('key:create --kind runner makes a key that may also move runs; an integration key may not', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const runner = await ok('key:create', '--account', account.id, '--name', 'runner', '--kind', 'runner');
      const shop = await ok('key:create', '--account', account.id, '--name', 'shop', '--kind', 'integration');
      expect(runner).to.include({ name: 'runner', kind: 'runner' });
      expect(shop).to.include({ name: 'shop', kind: 'integration' });
      const stored = await withFileDb((db) =>
        select<{ id: string; kind: string }>(db, 'SELECT id, kind FROM api_keys ORDER BY name', []),
      );
      expect(stored).to.deep.equal([
        { id: runner.id, kind: 'runner' },
        { id: shop.id, kind: 'integration' },
      ]);

      // An unknown run: the runner key gets as far as looking for it, the integration key does not.
      const move = (key: string) =>
        withAppOnFile((app) =>
          request(app).post('/trpc/runs.transition').set('x-api-key', key).send({ runId: randomUUID(), status: 'running' }),
        );
      const asRunner = await move(runner.key);
      expect(asRunner.status).to.equal(404);
      expect(asRunner.body.error.message).to.equal('Run not found');
      const asShop = await move(shop.key);
      expect(asShop.status).to.equal(403);
      expect(asShop.body.error.message).to.equal('This API key may not call this procedure');
    });

    it('key:create makes a different key each time', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const first = await ok('key:create', '--account', account.id, '--name', 'one');
      const second = await ok('key:create', '--account', account.id, '--name', 'two');
      expect(first.key).to.not.equal(second.key);
    });

    it('key:list lists the account\'s keys and never prints a key value', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const other = await ok('account:create', '--name', 'Other');
      const first = await ok('key:create', '--account', account.id, '--name', 'one');
      const second = await ok('key:create', '--account', account.id, '--name', 'two', '--kind', 'runner');
      await ok('key:create', '--account', other.id, '--name', 'theirs');

      const result = await cli('key:list', '--account', account.id);
      expect(result.code).to.equal(0);
      const listed = JSON.parse(result.stdout);
      expect(listed.map((key: { id: string; kind: string }) => [key.id, key.kind])).to.have.deep.members([
        [first.id, 'integration'],
        [second.id, 'runner'],
      ]);
      for (const key of listed) {
        expect(key).to.not.have.property('key');
        expect(key).to.not.have.property('keyHash');
        expect(key.prefix).to.match(/^svc_[0-9a-f]{4}$/);
      }
      for (const secret of [first.key, second.key]) {
        expect(result.stdout).to.not.include(secret.slice(8));
      }
    });

    it('a key made by the CLI authenticates against the service on the same database', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const { key } = await ok('key:create', '--account', account.id, '--name', 'integration');
      const res = await withAppOnFile((app) =>
        request(app).post('/api/v1/contacts').set('x-api-key', key).send({ email: 'ada@example.com' }),
      );
      expect(res.status).to.equal(201);
      expect(res.body.contact.email).to.equal('ada@example.com');
    });

    it('key:disable makes the key inactive and key:enable makes it work again', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const { id, key } = await ok('key:create', '--account', account.id, '--name', 'integration');
      const get = () =>
        withAppOnFile((app) => request(app).get(`/api/v1/contacts/${randomUUID()}`).set('x-api-key', key));

      const disabled = await ok('key:disable', '--id', id);
      expect(disabled).to.include({ id, active: false });
      expect(disabled).to.not.have.property('key');
      const refusedRes = await get();
      expect(refusedRes.status).to.equal(401);
      expect(refusedRes.body).to.deep.include({ error: 'API key is inactive' });

      const enabled = await ok('key:enable', '--id', id);
      expect(enabled).to.include({ id, active: true });
      expect((await get()).status).to.equal(404);
    });

    it('key:create --expires-at stores the expiry in UTC', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const created = await ok(
        'key:create', '--account', account.id, '--name', 'temp', '--expires-at', '2099-01-02T05:04:05.123+02:00',
      );
      expect(created.expiresAt).to.equal('2099-01-02T03:04:05.123Z');
      const [listed] = await ok('key:list', '--account', account.id);
      expect(listed.expiresAt).to.equal('2099-01-02T03:04:05.123Z');
    });

    it('a key whose --expires-at has passed is refused as expired', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const { key } = await ok('key:create', '--account', account.id, '--name', 'old', '--expires-at', '2020-01-01T00:00:00Z');
      const res = await withAppOnFile((app) =>
        request(app).post('/api/v1/contacts').set('x-api-key', key).send({ email: 'ada@example.com' }),
      );
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ error: 'API key has expired' });
    });
  });

  describe('sequences', () => {
    it('sequence:create makes a draft sequence by default', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const sequence = await ok('sequence:create', '--account', account.id, '--name', 'Onboarding');
      expect(sequence).to.include({ accountId: account.id, name: 'Onboarding', status: 'draft' });
      expect(sequence.id).to.match(UUID);
    });

    it('sequence:create --status active makes an active sequence', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const sequence = await ok('sequence:create', '--account', account.id, '--name', 'Onboarding', '--status', 'active');
      expect(sequence.status).to.equal('active');
      const [row] = await withFileDb((db) =>
        select<{ status: string }>(db, 'SELECT status FROM sequences WHERE id = ?', [sequence.id]),
      );
      expect(row.status).to.equal('active');
    });

    it('sequence:set-status moves a sequence through every status', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const { id } = await ok('sequence:create', '--account', account.id, '--name', 'Onboarding');
      for (const status of ['active', 'paused', 'archived', 'draft']) {
        expect(await ok('sequence:set-status', '--id', id, '--status', status)).to.include({ id, status });
      }
    });

    it('sequence:list lists the account\'s sequences only', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const other = await ok('account:create', '--name', 'Other');
      const first = await ok('sequence:create', '--account', account.id, '--name', 'One');
      const second = await ok('sequence:create', '--account', account.id, '--name', 'Two', '--status', 'paused');
      await ok('sequence:create', '--account', other.id, '--name', 'Theirs');

      const listed = await ok('sequence:list', '--account', account.id);
      expect(listed).to.have.length(2);
      expect(listed.map((s: { id: string; status: string }) => [s.id, s.status])).to.have.deep.members([
        [first.id, 'draft'],
        [second.id, 'paused'],
      ]);
    });
  });

  describe('sequences: archiving and deleting', () => {
    it('sequence:list leaves archived sequences out unless --status archived asks for them', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const kept = await ok('sequence:create', '--account', account.id, '--name', 'Kept', '--status', 'active');
      const old = await ok('sequence:create', '--account', account.id, '--name', 'Old');
      await ok('sequence:set-status', '--id', old.id, '--status', 'archived');

      expect((await ok('sequence:list', '--account', account.id)).map((s: { id: string }) => s.id)).to.deep.equal([kept.id]);
      const archived = await ok('sequence:list', '--account', account.id, '--status', 'archived');
      expect(archived.map((s: { id: string; status: string }) => [s.id, s.status])).to.deep.equal([[old.id, 'archived']]);
      expect(await refused('sequence:list', '--account', account.id, '--status', 'gone')).to.include('--status');
    });

    it('sequence:delete deletes a sequence that never had a run, and refuses one with runs, saying to archive it', async () => {
      const account = await ok('account:create', '--name', 'Acme');
      const draft = await ok('sequence:create', '--account', account.id, '--name', 'Scratch');
      expect(await ok('sequence:delete', '--id', draft.id)).to.deep.equal({ deleted: draft.id });
      expect(await ok('sequence:list', '--account', account.id)).to.deep.equal([]);

      const used = await ok('sequence:create', '--account', account.id, '--name', 'Used', '--status', 'active');
      await withFileDb((db) => enrollContact(db, { accountId: account.id, sequenceId: used.id, contact: { email: 'ada@example.com' } }));
      const before = await counts();
      expect(await refused('sequence:delete', '--id', used.id)).to.equal(`error: ${SEQUENCE_HAS_RUNS}\n`);
      expect(await refused('sequence:delete', '--id', draft.id)).to.equal('error: Sequence not found\n');
      expect(await refused('sequence:delete', '--id', 'scratch')).to.include('--id');
      expect(await counts()).to.deep.equal(before);
      expect((await ok('sequence:list', '--account', account.id)).map((s: { id: string }) => s.id)).to.deep.equal([used.id]);
    });
  });

  describe('bad arguments', () => {
    let accountId: string;
    let keyId: string;
    let sequenceId: string;
    let before: Record<string, number>;

    beforeEach(async () => {
      accountId = (await ok('account:create', '--name', 'Acme', '--max-active-runs', '5')).id;
      keyId = (await ok('key:create', '--account', accountId, '--name', 'k')).id;
      sequenceId = (await ok('sequence:create', '--account', accountId, '--name', 'S', '--status', 'active')).id;
      before = await counts();
    });

    // Nothing written: no new rows, and the rows there were are as they were.
    afterEach(async () => {
      expect(await counts()).to.deep.equal(before);
      const [sequence] = await ok('sequence:list', '--account', accountId);
      expect(sequence.status).to.equal('active');
      const [key] = await ok('key:list', '--account', accountId);
      expect(key.active).to.equal(true);
      const [row] = await withFileDb((db) =>
        select<{ max_active_runs: number | string }>(db, 'SELECT max_active_runs FROM accounts WHERE id = ?', [accountId]),
      );
      expect(Number(row.max_active_runs)).to.equal(5);
    });

    it('refuses a missing required flag, naming it', async () => {
      expect(await refused('account:create')).to.include('--name');
      expect(await refused('key:create', '--account', accountId)).to.include('--name');
      expect(await refused('account:update', '--id', accountId)).to.include('--max-active-runs');
    });

    it('refuses a flag without a value', async () => {
      expect(await refused('account:create', '--name')).to.include('--name');
      expect(await refused('key:disable', '--id', '--name', 'x')).to.include('--id');
    });

    it('refuses an unknown flag, naming it', async () => {
      expect(await refused('account:create', '--name', 'Acme', '--colour', 'red')).to.include('--colour');
      expect(await refused('key:disable', '--id', keyId, '--force', 'yes')).to.include('--force');
    });

    it('refuses a flag given twice', async () => {
      expect(await refused('account:create', '--name', 'A', '--name', 'B')).to.include('--name');
    });

    it('refuses an empty name', async () => {
      expect(await refused('account:create', '--name', '   ')).to.include('--name');
    });

    it('refuses an id that is not a UUID', async () => {
      expect(await refused('key:create', '--account', 'acme', '--name', 'k')).to.include('--account');
      expect(await refused('key:disable', '--id', '12345')).to.include('--id');
      expect(await refused('sequence:list', '--account', `${accountId}x`)).to.include('--account');
    });

    it('refuses a status that is not one of draft, active, paused, archived', async () => {
      expect(await refused('sequence:create', '--account', accountId, '--name', 'S2', '--status', 'live')).to.include('--status');
      expect(await refused('sequence:set-status', '--id', sequenceId, '--status', 'ACTIVE')).to.include('--status');
      expect(await refused('sequence:set-status', '--id', sequenceId, '--status', 'deleted')).to.include('--status');
    });

    it('refuses a limit that is not a whole number', async () => {
      for (const value of ['abc', '-1', '2.5', '1e3']) {
        expect(await refused('account:create', '--name', 'B', '--max-active-runs', value)).to.include('--max-active-runs');
        expect(await refused('account:update', '--id', accountId, '--max-active-runs', value)).to.include(
          '--max-active-runs',
        );
      }
    });

    it('refuses a key kind that is not integration or runner', async () => {
      for (const kind of ['admin', 'RUNNER', '']) {
        expect(await refused('key:create', '--account', accountId, '--name', 'k2', '--kind', kind), kind).to.include('--kind');
      }
    });

    it('refuses an expiry that is not an ISO 8601 date-time', async () => {
      expect(await refused('key:create', '--account', accountId, '--name', 'k2', '--expires-at', 'tomorrow')).to.include(
        '--expires-at',
      );
    });

    it('refuses an unknown command', async () => {
      expect(await refused('account:delete', '--id', accountId)).to.include('account:delete');
    });

    it('refuses to run without a command', async () => {
      await refused();
    });

    it('refuses an argument that is not a flag', async () => {
      await refused('account:create', 'Acme');
    });

    it('refuses ids that exist nowhere', async () => {
      const nowhere = randomUUID();
      expect(await refused('account:update', '--id', nowhere, '--max-active-runs', '1')).to.include('Account not found');
      expect(await refused('key:create', '--account', nowhere, '--name', 'k2')).to.include('Account not found');
      expect(await refused('key:disable', '--id', nowhere)).to.include('not found');
      expect(await refused('key:enable', '--id', nowhere)).to.include('not found');
      expect(await refused('sequence:create', '--account', nowhere, '--name', 'S2')).to.include('Account not found');
      expect(await refused('sequence:set-status', '--id', nowhere, '--status', 'paused')).to.include('Sequence not found');
    });
  });

  describe('help', () => {
    it('--help prints the usage of every command and exits 0', async () => {
      const result = await cli('--help');
      expect(result.code).to.equal(0);
      for (const name of [
        'account:create', 'account:update', 'key:create', 'key:disable', 'key:enable', 'key:list',
        'sequence:create', 'sequence:set-status', 'sequence:list',
      ]) {
        expect(result.stdout).to.include(name);
      }
      expect(fs.existsSync(databaseFile)).to.equal(false);
    });
  });

  describe('on the service database', () => {
    // The test database itself when it is a server (MariaDB in CI); an in-memory SQLite
    // database cannot be shared with a second connection.
    const shared = !TEST_DATABASE_URL.startsWith('sqlite:');

    (shared ? it : it.skip)('creates a key that the service on that database accepts', async () => {
      const account = JSON.parse((await cliOn(TEST_DATABASE_URL, ['account:create', '--name', 'Acme'])).stdout);
      const created = await cliOn(TEST_DATABASE_URL, ['key:create', '--account', account.id, '--name', 'k']);
      expect(created.code).to.equal(0);
      rebindModelsToTestDb();
      const res = await api(JSON.parse(created.stdout).key).post('/contacts').send({ email: 'ada@example.com' });
      expect(res.status).to.equal(201);
    });
  });

});

// Runs after the CLI's tests, which opened and closed databases of their own.
describe('the test database after the CLI ran', () => {
  it('still serves the factories and the app', async () => {
    const account = await buildAccount({ name: 'After the CLI' });
    const rows = await select<{ name: string }>(testDb(), 'SELECT name FROM accounts WHERE id = ?', [account.id]);
    expect(rows).to.deep.equal([{ name: 'After the CLI' }]);
    const { key, id } = await buildApiKey(account.id);
    expect((await api(key).post('/contacts').send({ email: 'ada@example.com' })).status).to.equal(201);
    // Model queries outside a transaction go through the instance the models are bound to.
    expect(await countAccounts(testDb())).to.equal(1);
    expect((await listApiKeys(testDb(), { accountId: account.id })).map((k) => k.id)).to.deep.equal([id]);
  });
});

describe('demo seed', () => {
  it('creates an account, a working key and an active sequence of that account on an empty database', async () => {
    const demo = await seedDemoIfEmpty(testDb());
    expect(demo).to.not.equal(null);
    expect(demo!.key).to.match(KEY);

    const res = await api(demo!.key).post('/contacts').send({ email: 'ada@example.com' });
    expect(res.status).to.equal(201);

    const sequences = await select<{ id: string; account_id: string; status: string }>(
      testDb(),
      'SELECT id, account_id, status FROM sequences',
      [],
    );
    expect(sequences).to.deep.equal([{ id: demo!.sequenceId, account_id: demo!.accountId, status: 'active' }]);
  });

  it('stores only the hash of the demo key', async () => {
    const demo = await seedDemoIfEmpty(testDb());
    const rows = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM api_keys', []);
    expect(rows).to.have.length(1);
    expect(JSON.stringify(rows)).to.not.include(demo!.key.slice(8));
    expect(rows[0].key_prefix).to.equal(demo!.key.slice(0, 8));
  });

  it('returns null and creates nothing when there is an account already', async () => {
    await buildAccount();
    expect(await seedDemoIfEmpty(testDb())).to.equal(null);
    const [{ count }] = await select<{ count: number | string }>(testDb(), 'SELECT COUNT(*) AS count FROM accounts', []);
    expect(Number(count)).to.equal(1);
    const [{ total }] = await select<{ total: number | string }>(testDb(), 'SELECT COUNT(*) AS total FROM api_keys', []);
    expect(Number(total)).to.equal(0);
  });
});
