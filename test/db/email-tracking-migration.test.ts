import { expect } from 'chai';
import { createMigrator, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// email_channels.track_opens and track_clicks (issue 36 section 5): an account's channel saved
// before the upgrade reads both off, and the migration goes down and up again on either database.

const MIGRATION = '20261227000300-add-email-tracking.js';

describe('email tracking migration', () => {
  afterEach(async () => {
    await migrateToLatest(testDb());
  });

  it('leaves a channel saved before it with tracking off, and drops the columns on the way down', async () => {
    const db = testDb();
    const migrator = createMigrator(db);
    const { accountId } = await buildTenant();
    // This migration and any later one (migrateToLatest puts them back after the test).
    await migrator.down({ to: MIGRATION });
    const columns = async () => Object.keys(await db.sequelize.getQueryInterface().describeTable('email_channels'));
    expect(await columns()).not.to.include.members(['track_opens']);
    expect(await columns()).not.to.include.members(['track_clicks']);
    const now = new Date();
    await db.sequelize.query('INSERT INTO email_channels (account_id, from_address, created_at, updated_at) VALUES (?, ?, ?, ?)', { replacements: [accountId, 'a@shop.example', now, now] });
    await migrator.up();
    expect(await columns()).to.include.members(['track_opens', 'track_clicks']);
    const [row] = await select<{ track_opens: unknown; track_clicks: unknown }>(db, 'SELECT track_opens, track_clicks FROM email_channels WHERE account_id = ?', [accountId]);
    expect([Boolean(Number(row!.track_opens)), Boolean(Number(row!.track_clicks))]).to.deep.equal([false, false]);
  });
});
