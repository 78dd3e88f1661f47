import { expect } from 'chai';
import { UniqueConstraintError } from 'sequelize';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { insertRows } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { ACTIVITY_COLUMNS } from '../../src/services/activities/activity-rows';
import { newRowId } from '../../src/services/ids';
import { schemaTables, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';

// The activities table's migration goes down and up again on either database, and its unique
// key is what decides a client id's one row.

const MIGRATION = '20261226000000-create-activities.js';

describe('activities migration', () => {
  afterEach(async () => {
    await migrateToLatest(testDb());
  });

  it('drops the table on the way down and makes it again on the way up', async () => {
    const db = testDb();
    const migrator = createMigrator(db);
    const executed = (await migrator.executed()).map((m) => m.name);
    const after = executed.slice(executed.indexOf(MIGRATION) + 1);
    // Only what this migration made goes, with the later migrations (undone first).
    await migrator.down({ to: MIGRATION });
    expect(await schemaTables(db)).not.to.include('activities');
    expect((await migrator.executed()).map((m) => m.name)).to.not.include.members([MIGRATION, ...after]);
    await migrator.up();
    expect(await schemaTables(db)).to.include('activities');
    expect((await migrator.executed()).map((m) => m.name)).to.include.members([MIGRATION, ...after]);
  });

  it('refuses a second row for one (account, id), and takes the same id in another account', async () => {
    const db = testDb();
    const a = await buildTenant();
    const b = await buildTenant();
    const ca = await buildContact(a.accountId);
    const cb = await buildContact(b.accountId);
    const row = (accountId: string, contactId: string, id: string) => [newRowId(), accountId, id, contactId, 'seen', '{}', new Date(), new Date()];
    await withTransaction(db, (t) => insertRows(db, 'activities', ACTIVITY_COLUMNS, [row(a.accountId, ca.id, 'x'), row(b.accountId, cb.id, 'x'), row(a.accountId, ca.id, 'X')], t));
    let error: unknown;
    try {
      await withTransaction(db, (t) => insertRows(db, 'activities', ACTIVITY_COLUMNS, [row(a.accountId, ca.id, 'x')], t));
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(UniqueConstraintError);
  });
});
