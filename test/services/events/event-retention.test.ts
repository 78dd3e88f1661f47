import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { execute } from '../../../src/db/sql/statements';
import { EventRetention } from '../../../src/services/events/event-retention';
import { createContact } from '../../../src/services/contacts/contact-operations';
import { caller, silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildTenant } from '../../support/factories';
import { allEvents } from './support';

// Events older than EVENT_RETENTION_DAYS go, in bounded batches; newer ones stay.

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date('2027-01-31T12:00:00.000Z');

async function eventsAged(accountId: string, ages: number[], prefix = 'aged') {
  for (const [i, days] of ages.entries()) {
    const contact = await createContact(testDb(), { accountId, email: `${prefix}-${i}@x.io` });
    await execute(
      testDb(),
      "UPDATE events SET created_at = ? WHERE account_id = ? AND type = 'contact.created' AND data LIKE ?",
      [new Date(NOW.getTime() - days * DAY), accountId, `%${contact.id}%`],
    );
  }
}

const emails = async (accountId: string) =>
  (await allEvents(accountId)).map((e) => (e.data as { contact: { email: string } }).contact.email);

describe('event retention', () => {
  it('purges events older than the retention period and keeps the rest, a bounded number per run', async () => {
    const { accountId } = await buildTenant();
    await eventsAged(accountId, [40, 31, 29, 35, 1, 45, 33]);
    const retention = new EventRetention(
      testDb(),
      { retentionDays: 30, intervalMs: 60_000, batchSize: 2, maxBatches: 2 },
      silentLogger,
      () => NOW,
    );

    await retention.runOnce();
    expect(await emails(accountId)).to.have.length(3);

    await retention.runOnce();
    expect(await emails(accountId)).to.deep.equal(['aged-2@x.io', 'aged-4@x.io']);
  });

  it('keeps polling cursors valid across a purge', async () => {
    const { accountId, key } = await buildTenant();
    await eventsAged(accountId, [40, 1]);
    const page = await caller(key).events.list({ limit: 1 });
    await new EventRetention(testDb(), { retentionDays: 30, intervalMs: 60_000, batchSize: 10, maxBatches: 1 }, silentLogger, () => NOW).runOnce();
    const next = await caller(key).events.list({ after: page.nextCursor });
    expect(next.events.map((e) => (e.data as { contact: { email: string } }).contact.email)).to.deep.equal(['aged-1@x.io']);
  });

  it('runs on its schedule and stops when asked, waiting for the batch under way', async () => {
    const { accountId } = await buildTenant();
    await eventsAged(accountId, [40, 50]);
    const retention = new EventRetention(
      testDb(),
      { retentionDays: 30, intervalMs: 20, batchSize: 1, maxBatches: 1 },
      silentLogger,
      () => NOW,
    );
    retention.start();
    const deadline = Date.now() + 3_000;
    while ((await emails(accountId)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await retention.stop();
    expect(await emails(accountId)).to.deep.equal([]);

    await eventsAged(accountId, [60], 'after-stop');
    await new Promise((r) => setTimeout(r, 80));
    expect(await emails(accountId)).to.have.length(1);
  });

  it('reads EVENT_RETENTION_DAYS: 30 by default, a positive whole number of days', () => {
    expect(loadConfig({}).eventRetentionDays).to.equal(30);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '7' }).eventRetentionDays).to.equal(7);
    for (const bad of ['0', '-1', '1.5', 'week']) {
      expect(() => loadConfig({ EVENT_RETENTION_DAYS: bad }), bad).to.throw(/EVENT_RETENTION_DAYS/);
    }
  });
});
