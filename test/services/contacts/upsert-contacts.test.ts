import { expect } from 'chai';
import { ValidationError } from '../../../src/errors/app-errors';
import type { ContactFields } from '../../../src/schemas/contact';
import { batchUpsertContacts, upsertContact } from '../../../src/services/contacts/contact-operations';
import { getContactByEmail } from '../../../src/services/contacts/find-contact';
import { captureQueries, testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';

// Upsert against the real database: set-based SQL, batch ordering and counting, atomicity.

interface StoredRow {
  email: string;
  first_name: string | null;
  last_name: string | null;
  tags: unknown;
  custom_fields: unknown;
}

async function storedContacts(accountId: string): Promise<StoredRow[]> {
  return (await testDb().sequelize.query(
    'SELECT email, first_name, last_name, tags, custom_fields FROM contacts WHERE account_id = ? ORDER BY email_normalized',
    { replacements: [accountId], type: 'SELECT' },
  )) as StoredRow[];
}

async function eventCounts(accountId: string): Promise<Record<string, number>> {
  const rows = (await testDb().sequelize.query(
    'SELECT type, COUNT(*) AS n FROM events WHERE account_id = ? GROUP BY type ORDER BY type',
    { replacements: [accountId], type: 'SELECT' },
  )) as Array<{ type: string; n: number | string }>;
  return Object.fromEntries(rows.map((row) => [row.type, Number(row.n)]));
}

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

function emails(count: number, prefix: string): ContactFields[] {
  return Array.from({ length: count }, (_, i) => ({ email: `${prefix}-${i}@example.com`, firstName: `N${i}` }));
}

function keysObject(count: number, prefix: string): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('upsert contacts (service)', () => {
  describe('set-based SQL', () => {
    it('issues as many statements for a batch of 100 new contacts as for a batch of 2', async () => {
      const { accountId } = await buildTenant();
      const small = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: emails(2, 'small') }));
      const large = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: emails(100, 'large') }));

      expect(small.result.inserted).to.equal(2);
      expect(large.result.inserted).to.equal(100);
      expect(large.queries.length).to.equal(small.queries.length);
      // Three of them record the events: one contact.created per contact.
      expect(large.queries.length).to.be.at.most(9);
      expect(await storedContacts(accountId)).to.have.length(102);
      expect(await eventCounts(accountId)).to.deep.equal({ 'contact.created': 102 });
    });

    it('issues as many statements for a batch of 100 that updates half as for a batch of 2 that updates one', async () => {
      const { accountId } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: [...emails(1, 'two'), ...emails(50, 'hundred')] });

      const small = await captureQueries(() =>
        batchUpsertContacts(testDb(), { accountId, contacts: emails(2, 'two').map((c) => ({ ...c, lastName: 'L' })) }),
      );
      const large = await captureQueries(() =>
        batchUpsertContacts(testDb(), { accountId, contacts: emails(100, 'hundred').map((c) => ({ ...c, lastName: 'L' })) }),
      );

      expect(small.result).to.deep.equal({ total: 2, inserted: 1, updated: 1 });
      expect(large.result).to.deep.equal({ total: 100, inserted: 50, updated: 50 });
      expect(large.queries.length).to.equal(small.queries.length);
      expect(large.queries.length).to.be.at.most(10);
      expect(await eventCounts(accountId)).to.deep.equal({ 'contact.created': 102, 'contact.updated': 51 });
      const rows = await storedContacts(accountId);
      expect(rows).to.have.length(102);
      expect(rows.every((row) => row.last_name === 'L')).to.equal(true);
    });

    // A batch of new contacts (an import's usual batch): the INSERT's count says every row is
    // the one it wrote, so nothing is read back; one existing email, and the rows are read.
    it('reads no contact back when every email of the batch is new, and does when one exists', async () => {
      const { accountId } = await buildTenant();
      const readsBack = (queries: string[]) => queries.some((sql) => /\bSELECT .* FROM contacts WHERE\b/.test(sql));
      const fresh = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: emails(3, 'fresh') }));
      expect(fresh.result).to.deep.equal({ total: 3, inserted: 3, updated: 0 });
      expect(readsBack(fresh.queries)).to.equal(false);

      const mixed = await captureQueries(() =>
        batchUpsertContacts(testDb(), { accountId, contacts: [{ email: 'fresh-1@example.com', lastName: 'L' }, ...emails(1, 'other')] }),
      );
      expect(mixed.result).to.deep.equal({ total: 2, inserted: 1, updated: 1 });
      expect(readsBack(mixed.queries)).to.equal(true);
      const rows = await storedContacts(accountId);
      expect(rows.map((row) => [row.email, row.first_name, row.last_name])).to.deep.equal([
        ['fresh-0@example.com', 'N0', null],
        ['fresh-1@example.com', 'N1', 'L'],
        ['fresh-2@example.com', 'N2', null],
        ['other-0@example.com', 'N0', null],
      ]);
      expect(await eventCounts(accountId)).to.deep.equal({ 'contact.created': 4, 'contact.updated': 1 });
    });

    // 100 contacts of 100 tags: 10,000 contact_tags rows, 50,000 bound values, past SQLite's
    // 32,766 in one statement (an import batch of 500 reaches it at 14 tags a contact).
    it('writes a batch whose mirror rows carry more values than one statement may bind', async () => {
      const { accountId } = await buildTenant();
      const tags = Array.from({ length: 100 }, (_, i) => `t${i}`);
      const result = await batchUpsertContacts(testDb(), { accountId, contacts: emails(100, 'many').map((c) => ({ ...c, tags })) });
      expect(result.inserted).to.equal(100);
      const [count] = (await testDb().sequelize.query('SELECT COUNT(*) AS n FROM contact_tags WHERE account_id = ?', {
        replacements: [accountId],
        type: 'SELECT',
      })) as Array<{ n: number | string }>;
      expect(Number(count!.n)).to.equal(10_000);
    });
  });

  describe('the tag mirror (contact_tags), set-based', () => {
    const eventStatements = () => (testDb().dialect === 'sqlite' ? 3 : 2);
    const tagged = (count: number, prefix: string, tags: string[]) =>
      emails(count, prefix).map((contact) => ({ ...contact, tags }));

    async function mirror(accountId: string): Promise<string[]> {
      const rows = (await testDb().sequelize.query(
        'SELECT c.email_normalized AS email, t.tag FROM contact_tags t JOIN contacts c ON c.id = t.contact_id WHERE t.account_id = ?',
        { replacements: [accountId], type: 'SELECT' },
      )) as Array<{ email: string; tag: string }>;
      return rows.map((row) => `${row.email}:${row.tag}`).sort();
    }

    it('writes the tags of a batch of 100 new tagged contacts in as many statements as for 2', async () => {
      const { accountId } = await buildTenant();
      const small = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: tagged(2, 'small', ['a', 'b']) }));
      const large = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: tagged(100, 'large', ['a', 'b']) }));

      expect(large.queries.length).to.equal(small.queries.length);
      // 7 for the contacts, their tags and their email prefixes (one INSERT each), and the
      // events' statements (2 on MySQL, 3 on SQLite).
      expect(large.queries.length).to.be.at.most(7 + eventStatements());
      const rows = await mirror(accountId);
      expect(rows).to.have.length(204);
      expect(rows).to.include.members(['large-99@example.com:a', 'large-99@example.com:b', 'small-0@example.com:b']);
    });

    it('rewrites the tags of a batch of 100 that updates half in as many statements as for 2 that update one', async () => {
      const { accountId } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: [...tagged(1, 'two', ['old']), ...tagged(50, 'hundred', ['old'])] });

      const small = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: tagged(2, 'two', ['new']) }));
      const large = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: tagged(100, 'hundred', ['new']) }));

      expect(large.result).to.deep.equal({ total: 100, inserted: 50, updated: 50 });
      expect(large.queries.length).to.equal(small.queries.length);
      // 11: one more than before contact_email_prefixes (the UPDATE of its updated_at), and one
      // more for the exit rules (does the account have any? none here: its runs are not read).
      expect(large.queries.length).to.be.at.most(11 + eventStatements());
      const rows = await mirror(accountId);
      expect(rows).to.have.length(102);
      expect(rows.every((row) => row.endsWith(':new'))).to.equal(true);
    });

    it('leaves the mirror alone when an upsert changes nothing, and keeps a contact\'s tags when tags are not given', async () => {
      const { accountId } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: tagged(3, 'same', ['x']) });
      const unchanged = await captureQueries(() => batchUpsertContacts(testDb(), { accountId, contacts: tagged(3, 'same', ['x']) }));
      expect(unchanged.queries.join('\n')).to.not.match(/contact_tags/);
      await batchUpsertContacts(testDb(), { accountId, contacts: emails(3, 'same').map((c) => ({ ...c, lastName: 'L' })) });
      expect(await mirror(accountId)).to.deep.equal(['same-0@example.com:x', 'same-1@example.com:x', 'same-2@example.com:x']);
    });

    it('carries the contact\'s created_at and updated_at, as the list\'s tag walk needs', async () => {
      const { accountId } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: tagged(2, 'times', ['t']) });
      await batchUpsertContacts(testDb(), { accountId, contacts: emails(1, 'times').map((c) => ({ ...c, lastName: 'Later' })) });
      const rows = (await testDb().sequelize.query(
        `SELECT COUNT(*) AS n FROM contact_tags t JOIN contacts c ON c.id = t.contact_id
          WHERE t.account_id = ? AND t.created_at = c.created_at AND t.updated_at = c.updated_at`,
        { replacements: [accountId], type: 'SELECT' },
      )) as Array<{ n: number | string }>;
      expect(Number(rows[0].n)).to.equal(2);
    });
  });

  describe('single upsert', () => {
    it('reports created on the first upsert of an email and not on the second', async () => {
      const { accountId } = await buildTenant();
      const first = await upsertContact(testDb(), { accountId, email: 'Ada@Example.com', firstName: 'Ada' });
      const second = await upsertContact(testDb(), { accountId, email: 'ada@example.com', lastName: 'Lovelace' });

      expect(first.created).to.equal(true);
      expect(second.created).to.equal(false);
      expect(second.contact.id).to.equal(first.contact.id);
      expect(second.contact.email).to.equal('Ada@Example.com');
      expect(second.contact.firstName).to.equal('Ada');
      expect(second.contact.lastName).to.equal('Lovelace');
      expect(second.contact.createdAt).to.equal(first.contact.createdAt);
    });

    it('returns the same contact the database then holds', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'c@x.io', tags: ['a'], customFields: { n: { x: 1 } } });
      const { contact } = await upsertContact(testDb(), {
        accountId,
        email: 'c@x.io',
        tags: [],
        customFields: { n: { y: 2 } },
      });
      const stored = await getContactByEmail(testDb(), { accountId, email: 'c@x.io' });

      expect(contact).to.deep.equal(stored);
      expect(stored.tags).to.deep.equal(['a']);
      expect(stored.customFields).to.deep.equal({ n: { x: 1, y: 2 } });
    });
  });

  describe('duplicates in one batch', () => {
    it('applies items with the same email in order, counting one insert and the rest as updates', async () => {
      const { accountId } = await buildTenant();
      const summary = await batchUpsertContacts(testDb(), {
        accountId,
        contacts: [
          { email: 'Dup@Example.com', firstName: 'First', customFields: { a: 1, nested: { x: 1 } } },
          { email: 'other@example.com' },
          { email: 'dup@example.com', firstName: 'Second', tags: ['t1'], customFields: { b: 2, nested: { y: 2 } } },
          { email: 'DUP@EXAMPLE.COM', lastName: 'Last', tags: [], customFields: { a: 3 } },
        ],
      });

      expect(summary).to.deep.equal({ total: 4, inserted: 2, updated: 2 });
      const rows = await storedContacts(accountId);
      expect(rows.map((row) => row.email)).to.deep.equal(['Dup@Example.com', 'other@example.com']);
      const dup = rows[0];
      expect(dup.first_name).to.equal('Second');
      expect(dup.last_name).to.equal('Last');
      expect(json(dup.tags)).to.deep.equal(['t1']);
      expect(json(dup.custom_fields)).to.deep.equal({ a: 3, b: 2, nested: { x: 1, y: 2 } });
    });

    it('counts every item as an update when the email already exists', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'known@example.com', firstName: 'Old' });
      const summary = await batchUpsertContacts(testDb(), {
        accountId,
        contacts: [
          { email: 'known@example.com', firstName: 'Middle' },
          { email: 'KNOWN@example.com', firstName: 'Final' },
        ],
      });

      expect(summary).to.deep.equal({ total: 2, inserted: 0, updated: 2 });
      const rows = await storedContacts(accountId);
      expect(rows).to.have.length(1);
      expect(rows[0].first_name).to.equal('Final');
      expect(rows[0].email).to.equal('known@example.com');
    });

    it('counts inserted, updated and total across a mix of new, existing and repeated emails', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'e1@example.com' });
      await buildContact(accountId, { email: 'e2@example.com' });
      const summary = await batchUpsertContacts(testDb(), {
        accountId,
        contacts: [
          { email: 'n1@example.com' },
          { email: 'e1@example.com' },
          { email: 'n2@example.com' },
          { email: 'N1@example.com' },
          { email: 'e1@example.com' },
        ],
      });

      expect(summary).to.deep.equal({ total: 5, inserted: 2, updated: 3 });
      expect((await storedContacts(accountId)).map((row) => row.email)).to.deep.equal([
        'e1@example.com',
        'e2@example.com',
        'n1@example.com',
        'n2@example.com',
      ]);
    });
  });

  describe('limits a merge can break', () => {
    it('rejects a batch whose merge pushes customFields over 100 keys and writes nothing', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', firstName: 'Before', customFields: keysObject(60, 'old') });

      const error = await rejectionOf(
        batchUpsertContacts(testDb(), {
          accountId,
          contacts: [
            { email: 'brand-new@example.com' },
            { email: 'full@example.com', firstName: 'After', customFields: keysObject(41, 'new') },
          ],
        }),
      );

      expect(error).to.be.instanceOf(ValidationError);
      expect((error as ValidationError).details.map((d) => d.path)).to.deep.equal(['contacts.1.customFields']);
      const rows = await storedContacts(accountId);
      expect(rows.map((row) => row.email)).to.deep.equal(['full@example.com']);
      expect(rows[0].first_name).to.equal('Before');
      expect(Object.keys(json(rows[0].custom_fields) as object)).to.have.length(60);
    });

    it('rejects a single upsert whose merge pushes customFields over 100 keys and leaves the contact as it was', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(100, 'old') });

      const error = await rejectionOf(
        upsertContact(testDb(), { accountId, email: 'full@example.com', lastName: 'X', customFields: { extra: 1 } }),
      );

      expect(error).to.be.instanceOf(ValidationError);
      expect((error as ValidationError).details.map((d) => d.path)).to.deep.equal(['customFields']);
      const [row] = await storedContacts(accountId);
      expect(row.last_name).to.equal(null);
      expect(json(row.custom_fields)).to.not.have.property('extra');
    });

    it('accepts a merge that lands on exactly 100 keys', async () => {
      const { accountId } = await buildTenant();
      await buildContact(accountId, { email: 'full@example.com', customFields: keysObject(60, 'old') });

      const { contact } = await upsertContact(testDb(), {
        accountId,
        email: 'full@example.com',
        customFields: { ...keysObject(40, 'new'), old0: 'overwritten' },
      });

      expect(Object.keys(contact.customFields)).to.have.length(100);
      expect(contact.customFields.old0).to.equal('overwritten');
    });

    it('rejects a batch where repeated items of one new email together exceed 100 keys', async () => {
      const { accountId } = await buildTenant();
      const error = await rejectionOf(
        batchUpsertContacts(testDb(), {
          accountId,
          contacts: [
            { email: 'grow@example.com', customFields: keysObject(70, 'a') },
            { email: 'grow@example.com', customFields: keysObject(31, 'b') },
          ],
        }),
      );

      expect(error).to.be.instanceOf(ValidationError);
      expect((error as ValidationError).details[0].path).to.equal('contacts.1.customFields');
      expect(await storedContacts(accountId)).to.have.length(0);
    });
  });
});
