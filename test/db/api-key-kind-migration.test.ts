import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { authenticateApiKey, generateApiKey, hashApiKey } from '../../src/services/api-keys';
import { caller } from '../support/app';
import { dropAllTables, testDb } from '../support/db';
import { migrateToJustBefore } from '../support/migrations';
import { trpcRejection } from '../support/trpc';

// The migration that adds api_keys.kind, applied to a database that already has keys (as an
// upgrade finds it): they become integration keys, and keep working as before.
//
// The svc user may only use the test database, so the "existing database" is the test database
// rebuilt up to the first migration; the full schema is rebuilt afterwards whatever happens.

const MIGRATION = '20261201000000-add-api-key-kind.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000a1';

const dropSchema = dropAllTables;

// Up to and including this migration: what the upgrade that brings it applies.
async function migrateThroughThis(db: Database): Promise<string[]> {
  return (await createMigrator(db).up({ to: MIGRATION })).map((migration) => migration.name);
}

// Keys as the code before the upgrade wrote them: no kind.
async function insertOldKeys(db: Database) {
  const now = new Date();
  await db.sequelize.query(
    'INSERT INTO accounts (id, name, max_active_runs, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)',
    { replacements: [ACCOUNT, 'Before the upgrade', now, now] },
  );
  const keys = [
    { id: '00000000-0000-4000-8000-0000000000b1', key: generateApiKey(), active: 1 },
    { id: '00000000-0000-4000-8000-0000000000b2', key: generateApiKey(), active: 0 },
  ];
  for (const { id, key, active } of keys) {
    await db.sequelize.query(
      `INSERT INTO api_keys (id, account_id, name, key_hash, key_prefix, active, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      { replacements: [id, ACCOUNT, `old ${id.slice(-2)}`, hashApiKey(key), key.slice(0, 8), active, now, now] },
    );
  }
  return keys;
}

async function storedKeys(db: Database) {
  return select<Record<string, unknown>>(db, 'SELECT * FROM api_keys ORDER BY id', []);
}

async function columns(db: Database): Promise<string[]> {
  return Object.keys(await db.sequelize.getQueryInterface().describeTable('api_keys'));
}

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    // Whatever a test left, the suites that follow get the whole schema.
    if (!(await columns(testDb()).catch((): string[] => [])).includes('kind')) await dropSchema(testDb());
    await migrateToLatest(testDb());
  });

  it('makes the keys of an existing database integration keys, leaving the rest of each row as it was', async () => {
    const db = testDb();
    await dropSchema(db);
    await migrateToJustBefore(db, MIGRATION);
    const keys = await insertOldKeys(db);
    const before = await storedKeys(db);
    expect(before[0]).to.not.have.property('kind');

    expect(await migrateThroughThis(db)).to.deep.equal([MIGRATION]);

    const after = await storedKeys(db);
    expect(after.map((row) => row.kind)).to.deep.equal(['integration', 'integration']);
    expect(after.map(({ kind: _kind, ...rest }) => rest)).to.deep.equal(before);

    // The active one authenticates as an integration key, and so may not move runs.
    const auth = await authenticateApiKey(db, keys[0].key);
    expect(auth).to.deep.equal({ ok: true, key: { keyId: keys[0].id, accountId: ACCOUNT, kind: 'integration' } });
    const refused = await trpcRejection(caller(keys[0].key).runs.transition({ runId: keys[0].id, status: 'running' }));
    expect(refused.code).to.equal('FORBIDDEN');
    expect((await authenticateApiKey(db, keys[1].key)).ok).to.equal(false);
  });

  it('adds a column the database constrains, and down removes it again keeping the keys', async () => {
    const db = testDb();
    await dropSchema(db);
    await migrateToJustBefore(db, MIGRATION);
    await insertOldKeys(db);
    await migrateThroughThis(db);
    const update = (kind: string) =>
      db.sequelize.query('UPDATE api_keys SET kind = ? WHERE account_id = ?', { replacements: [kind, ACCOUNT] });
    let refused = false;
    await update('superuser').catch(() => (refused = true));
    expect(refused, 'an unknown kind is refused').to.equal(true);
    await update('runner');

    await createMigrator(db).down({ to: MIGRATION });
    expect(await columns(db)).to.not.include('kind');
    expect(await storedKeys(db)).to.have.length(2);

    expect(await migrateThroughThis(db)).to.deep.equal([MIGRATION]);
    expect((await storedKeys(db)).map((row) => row.kind)).to.deep.equal(['integration', 'integration']);
  });
});
