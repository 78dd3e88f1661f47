import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { CONTACT_COUNT_CAP, countContacts } from '../../src/services/contacts/count-contacts';
import { captureQueries, testDb } from '../support/db';
import { buildAccount, buildContact } from '../support/factories';

// The Contacts page's total: exact up to CONTACT_COUNT_CAP, "more than" beyond, read from at
// most CONTACT_COUNT_CAP + 1 entries of the list's own index, never a COUNT over the account.

describe('the dashboard\'s capped contact count', function () {
  this.timeout(120_000);

  it('counts exactly with each filter of the list, within the account', async () => {
    const account = await buildAccount();
    const other = await buildAccount();
    await buildContact(account.id, { email: 'ada@example.com', tags: ['vip'] });
    await buildContact(account.id, { email: 'adam@example.com', tags: ['vip'], whatsappSubscriptionStatus: 'unsubscribed' });
    await buildContact(account.id, { email: 'bob@example.com', emailSubscriptionStatus: 'unsubscribed' });
    await buildContact(other.id, { email: 'ada@example.com', tags: ['vip'] });
    const count = (filters: Parameters<typeof countContacts>[1] extends infer T ? Omit<T, 'accountId'> : never) =>
      countContacts(testDb(), { accountId: account.id, ...filters });
    expect(await count({})).to.deep.equal({ count: 3, capped: false });
    expect(await count({ q: 'ADA' })).to.deep.equal({ count: 2, capped: false });
    expect(await count({ q: 'ada@example' })).to.deep.equal({ count: 1, capped: false });
    expect(await count({ tag: 'vip' })).to.deep.equal({ count: 2, capped: false });
    expect(await count({ tag: 'vip', whatsappSubscriptionStatus: 'unsubscribed' })).to.deep.equal({ count: 1, capped: false });
    expect(await count({ emailSubscriptionStatus: 'unsubscribed' })).to.deep.equal({ count: 1, capped: false });
    expect(await count({ tag: 'nobody' })).to.deep.equal({ count: 0, capped: false });
  });

  it(`stops at ${CONTACT_COUNT_CAP.toLocaleString('en')} with one LIMITed read, and says so`, async () => {
    const account = await buildAccount();
    const total = CONTACT_COUNT_CAP + 2;
    for (let start = 0; start < total; start += 500) {
      const contacts = Array.from({ length: Math.min(500, total - start) }, (_, i) => ({ email: `c${start + i}@example.com` }));
      await batchUpsertContacts(testDb(), { accountId: account.id, contacts });
    }
    const started = process.hrtime.bigint();
    const { result, queries } = await captureQueries(() => countContacts(testDb(), { accountId: account.id }));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    process.stdout.write(`      capped count over ${total.toLocaleString('en')} contacts: ${ms.toFixed(1)} ms\n`);
    expect(result).to.deep.equal({ count: CONTACT_COUNT_CAP, capped: true });
    expect(queries).to.have.length(1);
    expect(queries[0]).to.match(/COUNT\(\*\) AS n FROM \(SELECT 1 AS one FROM .*LIMIT/s);

    // One below the cap is still exact.
    await testDb().sequelize.query('DELETE FROM contacts WHERE account_id = ? AND email IN (?, ?, ?)', {
      replacements: [account.id, 'c0@example.com', 'c1@example.com', 'c2@example.com'],
    });
    expect(await countContacts(testDb(), { accountId: account.id })).to.deep.equal({ count: CONTACT_COUNT_CAP - 1, capped: false });
  });

  // The count reads the index the list's first page walks (SQLite's plan; MariaDB's depends on
  // statistics a test's handful of rows do not have).
  const PLANS: Array<{ filters: Parameters<typeof countContacts>[1] extends infer T ? Omit<T, 'accountId'> : never; index: string }> = [
    { filters: {}, index: 'contacts_account_created' },
    { filters: { tag: 'vip' }, index: 'contact_tags_account_tag_created' },
    { filters: { emailSubscriptionStatus: 'unsubscribed' }, index: 'contacts_account_email_status_created' },
    { filters: { q: 'ad' }, index: 'contact_email_prefixes_account_prefix_created' },
  ];
  for (const { filters, index } of PLANS) {
    it(`counts ${JSON.stringify(filters)} through ${index} (SQLite plan)`, async function () {
      if (testDb().dialect !== 'sqlite') this.skip();
      const account = await buildAccount();
      await buildContact(account.id, { email: 'ada@example.com', tags: ['vip'] });
      const { queries } = await captureQueries(() => countContacts(testDb(), { accountId: account.id, ...filters }));
      const sql = queries.find((q) => q.includes('COUNT(*)'))!.replace(/^Executing \([^)]*\): /, '');
      const details = (await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${sql}`, [])).map((row) => row.detail);
      expect(details.join('\n')).to.include(index);
      expect(details.filter((detail) => /^SCAN (c|t|p)\b/.test(detail) && !detail.includes('INDEX')), details.join('\n')).to.deep.equal([]);
    });
  }
});
