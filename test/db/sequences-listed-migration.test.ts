import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { listSequences } from '../../src/services/sequences/list-sequences';
import { updateSequence } from '../../src/services/sequences/sequence-admin';
import { dropAllTables, testDb } from '../support/db';
import { insertOldContacts, migrateToJustBefore } from '../support/migrations';

// The migration that gives the sequences list an index of the sequences that are not archived,
// applied to a database that already has sequences (as an upgrade finds it): archived ones
// leave the default list at once, and a later change of status moves a sequence in or out.

const MIGRATION = '20261209000000-create-sequences-listed-index.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000e1';
const OLD = [
  { id: '00000000-0000-4000-8000-0000000000f1', status: 'draft', minute: 1 },
  { id: '00000000-0000-4000-8000-0000000000f2', status: 'archived', minute: 2 },
  { id: '00000000-0000-4000-8000-0000000000f3', status: 'active', minute: 3 },
];

async function insertOldSequences() {
  await insertOldContacts(testDb(), ACCOUNT, []);
  for (const sequence of OLD) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, sequence.minute));
    await testDb().sequelize.query(
      'INSERT INTO sequences (id, account_id, name, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      { replacements: [sequence.id, ACCOUNT, `Old ${sequence.minute}`, sequence.status, at, at] },
    );
  }
}

const listed = async (status?: 'archived') =>
  (await listSequences(testDb(), { accountId: ACCOUNT, limit: 10, status })).items.map((sequence) => sequence.id.slice(-2));

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    await migrateToLatest(testDb());
  });

  it('leaves the archived sequences already there out of the list, and follows later changes of status', async () => {
    await dropAllTables(testDb());
    await migrateToJustBefore(testDb(), MIGRATION);
    await insertOldSequences();
    expect((await createMigrator(testDb()).up({ to: MIGRATION })).map((m) => m.name)).to.deep.equal([MIGRATION]);
    await migrateToLatest(testDb());

    expect(await listed()).to.deep.equal(['f3', 'f1']);
    expect(await listed('archived')).to.deep.equal(['f2']);
    await updateSequence(testDb(), { id: OLD[2]!.id, status: 'archived' });
    await updateSequence(testDb(), { id: OLD[1]!.id, status: 'paused' });
    expect(await listed()).to.deep.equal(['f2', 'f1']);
    expect(await listed('archived')).to.deep.equal(['f3']);
  });

  it('goes down and up again', async () => {
    await dropAllTables(testDb());
    await migrateToJustBefore(testDb(), MIGRATION);
    await insertOldSequences();
    await createMigrator(testDb()).up({ to: MIGRATION });
    await createMigrator(testDb()).down({ to: MIGRATION });
    const indexes = async () =>
      testDb().dialect === 'sqlite'
        ? (await select<{ name: string }>(testDb(), "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sequences'", [])).map((r) => r.name)
        : (await select<{ name: string }>(testDb(), "SELECT index_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'sequences'", [])).map((r) => r.name);
    expect(await indexes()).to.not.include('sequences_account_listed_created');
    await createMigrator(testDb()).up({ to: MIGRATION });
    expect(await indexes()).to.include('sequences_account_listed_created');
    await migrateToLatest(testDb());
    expect(await listed()).to.deep.equal(['f3', 'f1']);
  });
});
