import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { listContacts } from '../../src/services/contacts/list-contacts';
import { dropAllTables, schemaTables, testDb } from '../support/db';
import { insertOldContacts, migrateToJustBefore } from '../support/migrations';

// The migration that adds contact_email_prefixes, applied to a database that already has
// contacts (as an upgrade finds it): the first 1..4 characters of each email are copied in, with
// the contact's timestamps, in one statement, so q finds them at once.

const MIGRATION = '20261207000000-create-contact-email-prefixes.js';
const ACCOUNT = '00000000-0000-4000-8000-0000000000e1';

const OLD_CONTACTS = [
  { id: '00000000-0000-4000-8000-0000000000f1', email: 'ada@x.io', minute: 1 },
  { id: '00000000-0000-4000-8000-0000000000f2', email: 'ádám@x.io', minute: 2 },
  { id: '00000000-0000-4000-8000-0000000000f3', email: 'b@x', minute: 3 },
  { id: '00000000-0000-4000-8000-0000000000f4', email: 'adam@x.io', minute: 4 },
];

describe(`migration ${MIGRATION}`, function () {
  this.timeout(60_000);

  afterEach(async () => {
    if (!(await schemaTables(testDb())).includes('contact_email_prefixes')) await dropAllTables(testDb());
    await migrateToLatest(testDb());
  });

  it('copies the first 1..4 characters of existing emails, with their timestamps, and q finds them', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    const [ada, accented, b, adam] = await insertOldContacts(db, ACCOUNT, OLD_CONTACTS);

    expect((await createMigrator(db).up({ to: MIGRATION })).map((m) => m.name)).to.deep.equal([MIGRATION]);

    const rows = await select<{ contact_id: string; prefix: string; same: number | string }>(
      db,
      `SELECT p.contact_id, p.prefix, (p.created_at = c.created_at AND p.updated_at = c.updated_at AND p.account_id = c.account_id) AS same
         FROM contact_email_prefixes p JOIN contacts c ON c.id = p.contact_id`,
      [],
    );
    expect(rows.map((row) => `${row.contact_id.slice(-2)} ${row.prefix}`).sort()).to.deep.equal(
      ['f1 a', 'f1 ad', 'f1 ada', 'f1 ada@', 'f2 á', 'f2 ád', 'f2 ádá', 'f2 ádám', 'f3 b', 'f3 b@', 'f3 b@x', 'f4 a', 'f4 ad', 'f4 ada', 'f4 adam'].sort(),
    );
    expect(rows.every((row) => Number(row.same) === 1)).to.equal(true);

    await migrateToLatest(db);
    const ids = async (q: string, sort?: 'updatedAt') =>
      (await listContacts(db, { accountId: ACCOUNT, q, sort, limit: 10 })).items.map((contact) => contact.id);
    expect(await ids('ad')).to.deep.equal([adam.id, ada.id]);
    expect(await ids('ad', 'updatedAt')).to.deep.equal([ada.id, adam.id]);
    expect(await ids('ÁDÁM')).to.deep.equal([accented.id]);
    expect(await ids('b@x')).to.deep.equal([b.id]);
    expect(await ids('adam@x')).to.deep.equal([adam.id]);
  });

  it('goes down and up again', async () => {
    const db = testDb();
    await dropAllTables(db);
    await migrateToJustBefore(db, MIGRATION);
    await insertOldContacts(db, ACCOUNT, OLD_CONTACTS);
    await createMigrator(db).up({ to: MIGRATION });
    await createMigrator(db).down({ to: MIGRATION });
    expect(await schemaTables(db)).to.not.include('contact_email_prefixes');
    await createMigrator(db).up({ to: MIGRATION });
    expect(await select(db, 'SELECT prefix FROM contact_email_prefixes', [])).to.have.length(15);
  });
});
