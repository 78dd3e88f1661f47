import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { listContacts } from '../../src/services/contacts/list-contacts';
import { dropAllTables, schemaTables, testDb } from '../support/db';
import { insertOldContacts, migrateToJustBefore } from '../support/migrations';

// The migration that adds the list indexes and contact_tags, applied to a database that
// already has contacts (as an upgrade finds it): their tags are copied into contact_tags, with
// their timestamps, so the tag filter finds them at once.

const MIGRATION = '20261202000000-create-list-indexes.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000c1';

const OLD_CONTACTS = [
  { id: '00000000-0000-4000-8000-0000000000d1', email: 'a@x.io', tags: ['vip', 'VIP', 'naïve 🎉'], minute: 1 },
  { id: '00000000-0000-4000-8000-0000000000d2', email: 'b@x.io', tags: [], minute: 2 },
  { id: '00000000-0000-4000-8000-0000000000d3', email: 'c@x.io', tags: ['vip'], minute: 3 },
];

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    // Whatever a test left, the suites that follow get the whole schema.
    if (!(await schemaTables(testDb())).includes('contact_tags')) await dropAllTables(testDb());
    await migrateToLatest(testDb());
  });

  it('copies existing contacts\' tags into contact_tags, and the tag filter finds them', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    const [a, , c] = await insertOldContacts(db, ACCOUNT, OLD_CONTACTS);

    expect((await createMigrator(db).up({ to: MIGRATION })).map((m) => m.name)).to.deep.equal([MIGRATION]);

    const rows = await select<{ contact_id: string; tag: string }>(
      db,
      'SELECT contact_id, tag FROM contact_tags ORDER BY contact_id, tag',
      [],
    );
    expect(rows.map((row) => `${row.contact_id.slice(-2)} ${row.tag}`).sort()).to.deep.equal(
      ['d1 VIP', 'd1 naïve 🎉', 'd1 vip', 'd3 vip'].sort(),
    );
    await migrateToLatest(db);
    const page = await listContacts(db, { accountId: ACCOUNT, tag: 'vip', limit: 10 });
    expect(page.items.map((contact) => contact.id)).to.deep.equal([c.id, a.id]);
    const updated = await listContacts(db, { accountId: ACCOUNT, tag: 'vip', sort: 'updatedAt', limit: 10 });
    expect(updated.items.map((contact) => contact.id)).to.deep.equal([a.id, c.id]);
    expect((await listContacts(db, { accountId: ACCOUNT, tag: 'naïve 🎉', limit: 10 })).items).to.have.length(1);
  });

  it('goes down and up again', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    await insertOldContacts(db, ACCOUNT, OLD_CONTACTS);
    await createMigrator(db).up({ to: MIGRATION });
    await createMigrator(db).down({ to: MIGRATION });
    expect(await schemaTables(db)).to.not.include('contact_tags');
    await createMigrator(db).up({ to: MIGRATION });
    expect(await select(db, 'SELECT tag FROM contact_tags', [])).to.have.length(4);
  });
});
