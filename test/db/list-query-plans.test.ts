import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import { contactListScope, listContacts, SORTED_PREFIX_MATCHES, type ContactListFilters } from '../../src/services/contacts/list-contacts';
import { encodeCursor } from '../../src/services/lists/cursor';
import { listSequences } from '../../src/services/sequences/list-sequences';
import { listContactRuns, listSequenceRuns } from '../../src/services/sequences/list-runs';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';

// Every list statement reads through an index, in the list's order: SQLite's EXPLAIN QUERY
// PLAN for each filter and sort, with a cursor from the middle of a walk. (MariaDB's plans
// depend on table statistics, which a test's handful of rows do not have: `npm run
// bench:lists` EXPLAINs them on a seeded account.)

const CASES: Array<{ filters: ContactListFilters; index: string; sorted?: boolean }> = [
  { filters: {}, index: 'contacts_account_created' },
  { filters: { sort: 'updatedAt' }, index: 'contacts_account_updated' },
  { filters: { tag: 'vip' }, index: 'contact_tags_account_tag_created' },
  { filters: { tag: 'vip', sort: 'updatedAt' }, index: 'contact_tags_account_tag_updated' },
  { filters: { emailSubscriptionStatus: 'unsubscribed' }, index: 'contacts_account_email_status_created' },
  { filters: { emailSubscriptionStatus: 'unsubscribed', sort: 'updatedAt' }, index: 'contacts_account_updated' },
  { filters: { whatsappSubscriptionStatus: 'unsubscribed' }, index: 'contacts_account_whatsapp_status_created' },
  { filters: { whatsappSubscriptionStatus: 'unsubscribed', sort: 'updatedAt' }, index: 'contacts_account_updated' },
  { filters: { createdAfter: '2026-01-01T00:00:00Z' }, index: 'contacts_account_created' },
  { filters: { updatedSince: '2026-01-01T00:00:00Z', sort: 'updatedAt' }, index: 'contacts_account_updated' },
  { filters: { tag: 'vip', emailSubscriptionStatus: 'subscribed' }, index: 'contact_tags_account_tag_created' },
  // q of up to 4 characters walks its mirror rows in the list's order, whatever else is asked.
  { filters: { q: 'ad' }, index: 'contact_email_prefixes_account_prefix_created' },
  { filters: { q: 'ADA@', sort: 'updatedAt' }, index: 'contact_email_prefixes_account_prefix_updated' },
  { filters: { q: 'ad', tag: 'vip', sort: 'updatedAt' }, index: 'contact_email_prefixes_account_prefix_updated' },
  { filters: { q: 'a', emailSubscriptionStatus: 'subscribed', createdAfter: '2026-01-01T00:00:00Z' }, index: 'contact_email_prefixes_account_prefix_created' },
  // A longer q with few matches (under SORTED_PREFIX_MATCHES) reads them from the email index
  // and sorts them: the sort is bounded by that number.
  { filters: { q: 'ada@x' }, index: 'contacts_account_email_unique', sorted: true },
  { filters: { q: 'ada@x', tag: 'vip', sort: 'updatedAt' }, index: 'contacts_account_email_unique', sorted: true },
];

async function plan(sql: string): Promise<string[]> {
  const rows = await select<{ detail: string }>(testDb(), `EXPLAIN QUERY PLAN ${sql.replace(/^Executing \([^)]*\): /, '')}`, []);
  return rows.map((row) => row.detail);
}

async function listStatements(fn: () => Promise<unknown>): Promise<string[]> {
  const { queries } = await captureQueries(fn);
  return queries.filter((sql) => /\bFROM (contacts|contact_tags|contact_email_prefixes|sequences|sequence_runs)\b/.test(sql) && /ORDER BY/.test(sql));
}

describe('list query plans (SQLite)', () => {
  before(function () {
    if (testDb().dialect !== 'sqlite') {
      this.skip();
    }
  });

  for (const { filters, index, sorted } of CASES) {
    it(`GET /contacts ${JSON.stringify(filters)} reads ${index}${sorted ? ' and sorts the matches' : ' in order'}`, async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'ada@x.io', tags: ['vip'] });
      const cursor = encodeCursor(contactListScope({ accountId, ...filters }), { at: Date.UTC(2026, 5, 1), id: 'f' });
      const [statement] = await listStatements(() => listContacts(testDb(), { accountId, limit: 10, ...filters, cursor }));
      const steps = await plan(statement);
      expect(steps.join(' | ')).to.match(new RegExp(`^SEARCH \\w+ USING (COVERING )?INDEX ${index} \\(`));
      expect(steps.filter((step) => /^SCAN/.test(step)), 'no scan').to.deep.equal([]);
      expect(steps.some((step) => /TEMP B-TREE/.test(step))).to.equal(Boolean(sorted));
    });
  }

  it('a q longer than the mirror counts its matches on the email index alone, at most SORTED_PREFIX_MATCHES of them', async () => {
    const { accountId } = await buildTenant();
    await buildContact(accountId, { email: 'ada@x.io' });
    const { queries } = await captureQueries(() => listContacts(testDb(), { accountId, limit: 10, q: 'ada@x' }));
    const counts = queries.filter((sql) => /SELECT c\.email_normalized FROM contacts c INDEXED BY contacts_account_email_unique .* LIMIT \?$/.test(sql));
    expect(counts).to.have.length(1);
    const steps = await plan(counts[0]);
    expect(steps.join(' | ')).to.match(/SEARCH c USING COVERING INDEX contacts_account_email_unique \(account_id=\? AND email_normalized>\? AND email_normalized<\?\)/);
    expect(steps.filter((step) => /^SCAN/.test(step)), 'no scan').to.deep.equal([]);
  });

  it(`a q longer than the mirror with ${SORTED_PREFIX_MATCHES} matches or more walks its first characters' rows in order`, async () => {
    const { accountId } = await buildTenant();
    const contacts = Array.from({ length: SORTED_PREFIX_MATCHES }, (_, i) => ({ email: `adams-${i}@x.io` }));
    for (let i = 0; i < contacts.length; i += 100) {
      await batchUpsertContacts(testDb(), { accountId, contacts: contacts.slice(i, i + 100) });
    }
    for (const sort of ['createdAt', 'updatedAt'] as const) {
      const filters: ContactListFilters = { q: 'adams-', sort };
      const cursor = encodeCursor(contactListScope({ accountId, ...filters }), { at: Date.UTC(2026, 5, 1), id: 'f' });
      const [statement] = await listStatements(() => listContacts(testDb(), { accountId, limit: 10, ...filters, cursor }));
      const index = `contact_email_prefixes_account_prefix_${sort === 'updatedAt' ? 'updated' : 'created'}`;
      const steps = await plan(statement);
      expect(steps.join(' | ')).to.match(new RegExp(`^SEARCH p USING COVERING INDEX ${index} \\(account_id=\\? AND prefix=\\?`));
      expect(steps.filter((step) => /^SCAN/.test(step)), 'no scan').to.deep.equal([]);
      expect(steps.some((step) => /TEMP B-TREE/.test(step))).to.equal(false);
    }
  });

  it('the sequence list and both run lists read their index in order', async () => {
    const { accountId } = await buildTenant();
    const sequence = await buildSequence(accountId);
    const contact = await buildContact(accountId);
    const statements = [
      ...(await listStatements(() => listSequences(testDb(), { accountId, limit: 5 }))),
      ...(await listStatements(() => listSequences(testDb(), { accountId, limit: 5, status: 'active' }))),
      ...(await listStatements(() => listSequences(testDb(), { accountId, limit: 5, status: 'archived' }))),
      ...(await listStatements(() => listSequenceRuns(testDb(), { accountId, sequenceId: sequence.id, limit: 5 }))),
      ...(await listStatements(() => listSequenceRuns(testDb(), { accountId, sequenceId: sequence.id, limit: 5, status: 'running' }))),
      ...(await listStatements(() => listSequenceRuns(testDb(), { accountId, sequenceId: sequence.id, limit: 5, active: true }))),
      ...(await listStatements(() => listContactRuns(testDb(), { accountId, contactId: contact.id, limit: 5 }))),
    ];
    const plans = await Promise.all(statements.map(plan));
    expect(plans.map((steps) => steps.join(' | '))).to.deep.equal([
      'SEARCH s USING INDEX sequences_account_listed_created (account_id=?)',
      'SEARCH s USING INDEX sequences_account_status_created (account_id=? AND status=?)',
      'SEARCH s USING INDEX sequences_account_status_created (account_id=? AND status=?)',
      'SEARCH r USING INDEX sequence_runs_sequence_created (sequence_id=?)',
      'SEARCH r USING INDEX sequence_runs_sequence_status_created (sequence_id=? AND status=?)',
      'SEARCH r USING INDEX sequence_runs_sequence_active_created (sequence_id=?)',
      'SEARCH r USING INDEX sequence_runs_contact_created (contact_id=?)',
    ]);
  });
});

// The sequences list's default (archived left out) is the one list whose index MariaDB reads
// through a generated column; with the index named, its plan does not depend on statistics.
describe('the sequences list\'s plan (MySQL)', () => {
  before(function () {
    if (testDb().dialect !== 'mysql') this.skip();
  });

  it('reads sequences_account_listed_created from the cursor on, without a sort, leaving archived ones out', async () => {
    const { accountId } = await buildTenant();
    for (const status of ['draft', 'archived', 'active', 'archived', 'paused'] as const) await buildSequence(accountId, status);
    const { sequelize } = testDb();
    const original = sequelize.query;
    const sent: Array<{ sql: string; values: unknown[] }> = [];
    sequelize.query = function (this: typeof sequelize, ...args: Parameters<typeof original>) {
      const direct = (args[1] as { directStatement?: { values: unknown[] } } | undefined)?.directStatement;
      if (typeof args[0] === 'string' && /FROM sequences s FORCE INDEX/.test(args[0]) && direct) sent.push({ sql: args[0], values: [...direct.values] });
      return original.apply(this, args);
    } as typeof original;
    let page;
    try {
      const first = await listSequences(testDb(), { accountId, limit: 2 });
      page = await listSequences(testDb(), { accountId, limit: 2, cursor: first.nextCursor! });
    } finally {
      sequelize.query = original;
    }
    expect(page.items.map((s) => s.status)).to.deep.equal(['draft']);
    expect(sent).to.have.length(2);
    const [plan] = await select<{ key: string; type: string; Extra: string | null }>(testDb(), `EXPLAIN ${sent[1]!.sql}`, sent[1]!.values);
    expect(plan!.key).to.equal('sequences_account_listed_created');
    expect(plan!.type).to.be.oneOf(['range', 'ref']);
    expect(plan!.Extra ?? '').to.not.match(/filesort/);
  });
});
