import { expect } from 'chai';
import { execute } from '../../src/db/sql/statements';
import { batchUpsertContacts } from '../../src/services/contacts/contact-operations';
import {
  listContacts,
  SORTED_PREFIX_MATCHES,
  UPDATED_SORT_SETTLE_MS,
  type ContactListFilters,
} from '../../src/services/contacts/list-contacts';
import { api, caller } from '../support/app';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// GET /api/v1/contacts and contacts.list (issue 9): order, filters alone and combined, cursors,
// every 400, account isolation.

interface Listed {
  id: string;
  email: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

// Contacts with distinct, known created_at values: the n-th is n minutes after a fixed start.
async function contactsAt(accountId: string, specs: Array<Record<string, unknown>>) {
  await batchUpsertContacts(testDb(), { accountId, contacts: specs as never });
  const ids: string[] = [];
  for (const [n, spec] of specs.entries()) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, n));
    const [row] = (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ? AND email_normalized = ?', {
      replacements: [accountId, String(spec.email).toLowerCase()],
      type: 'SELECT',
    })) as Array<{ id: string }>;
    await setTimestamps(row.id, at, at);
    ids.push(row.id);
  }
  return ids;
}

// Moves a contact's timestamps (and its mirrors', as every writer keeps them in step).
async function setTimestamps(id: string, createdAt: Date, updatedAt: Date) {
  for (const table of ['contacts', 'contact_tags', 'contact_email_prefixes']) {
    await execute(testDb(), `UPDATE ${table} SET created_at = ?, updated_at = ? WHERE ${table === 'contacts' ? 'id' : 'contact_id'} = ?`, [
      createdAt,
      updatedAt,
      id,
    ]);
  }
}

async function list(key: string, query: Record<string, string | number> = {}) {
  const res = await api(key).get('/contacts').query(query);
  expect(res.status, res.text).to.equal(200);
  return res.body as { contacts: Listed[]; nextCursor: string | null };
}

async function walk(key: string, query: Record<string, string | number>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { contacts: Listed[]; nextCursor: string | null } = await list(key, { ...query, ...(cursor ? { cursor } : {}) });
    ids.push(...page.contacts.map((c) => c.id));
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}

// A clock past the settle window of sort=updatedAt: the contacts just written are listed too.
const settled = { now: () => new Date(Date.now() + UPDATED_SORT_SETTLE_MS + 1_000) };

// Every id of a walk through the service, on that clock.
async function settledWalk(accountId: string, filters: ContactListFilters, limit = 2): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listContacts(testDb(), { accountId, ...filters, limit, cursor }, settled);
    seen.push(...page.items.map((contact) => contact.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return seen;
}

async function badRequest(key: string, query: Record<string, string | number>) {
  const res = await api(key).get('/contacts').query(query);
  expect(res.status, res.text).to.equal(400);
  expect(res.body).to.have.property('error').that.is.a('string');
  return res.body as { error: string; details?: Array<{ path: string; message: string }> };
}

describe('GET /contacts', () => {
  describe('order and pages', () => {
    it('lists newest first with the Contact shape, and nextCursor null on a single page', async () => {
      const { accountId, key } = await buildTenant();
      const ids = await contactsAt(accountId, [{ email: 'a@x.io', tags: ['t'] }, { email: 'b@x.io' }, { email: 'c@x.io' }]);
      const page = await list(key);
      expect(page.contacts.map((c) => c.id)).to.deep.equal([...ids].reverse());
      expect(page.nextCursor).to.equal(null);
      expect(page.contacts[2]).to.include({ email: 'a@x.io', createdAt: '2026-01-01T00:00:00.000Z' });
      expect(page.contacts[2].tags).to.deep.equal(['t']);
      expect(Object.keys(page.contacts[0]).sort()).to.deep.equal(
        ['createdAt', 'customFields', 'email', 'emailSubscriptionStatus', 'firstName', 'id', 'lastName', 'phone', 'tags', 'updatedAt', 'whatsappSubscriptionStatus'],
      );
    });

    it('breaks ties on createdAt by id, newest first, and walks every contact once to a last page of null', async () => {
      const { accountId, key } = await buildTenant();
      const emails = Array.from({ length: 23 }, (_, i) => ({ email: `tie-${i}@x.io` }));
      await batchUpsertContacts(testDb(), { accountId, contacts: emails });
      const same = new Date(Date.UTC(2026, 0, 1));
      await execute(testDb(), 'UPDATE contacts SET created_at = ? WHERE account_id = ?', [same, accountId]);

      const { ids, pages } = await walk(key, { limit: 5 });
      expect(pages).to.equal(5);
      expect(ids).to.have.length(23);
      expect(ids).to.deep.equal([...ids].sort().reverse());
    });

    it('takes limit 1 to 200, 50 by default', async () => {
      const { accountId, key } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: Array.from({ length: 60 }, (_, i) => ({ email: `l${i}@x.io` })) });
      expect((await list(key)).contacts).to.have.length(50);
      expect((await list(key, { limit: 1 })).contacts).to.have.length(1);
      expect((await list(key, { limit: 200 })).contacts).to.have.length(60);
      expect((await list(key, { limit: 60 })).nextCursor).to.equal(null);
      expect((await list(key, { limit: 59 })).nextCursor).to.be.a('string');
    });

    it('with sort=updatedAt gives the oldest change first, ties by id ascending', async () => {
      const { accountId, key } = await buildTenant();
      const ids = await contactsAt(accountId, [{ email: 'a@x.io' }, { email: 'b@x.io' }, { email: 'c@x.io' }, { email: 'd@x.io' }]);
      const created = new Date(Date.UTC(2025, 0, 1));
      await setTimestamps(ids[0], created, new Date(Date.UTC(2026, 5, 1)));
      await setTimestamps(ids[1], created, new Date(Date.UTC(2026, 2, 1)));
      await setTimestamps(ids[2], created, new Date(Date.UTC(2026, 2, 1)));
      await setTimestamps(ids[3], created, new Date(Date.UTC(2026, 1, 1)));
      const tied = [ids[1], ids[2]].sort();

      const { ids: walked } = await walk(key, { sort: 'updatedAt', limit: 1 });
      expect(walked).to.deep.equal([ids[3], ...tied, ids[0]]);
    });
  });

  describe('filters', () => {
    async function fixture() {
      const tenant = await buildTenant();
      const ids = await contactsAt(tenant.accountId, [
        { email: 'Ada@Example.com', tags: ['vip', 'news'] },
        { email: 'adam@example.com', tags: ['news'], emailSubscriptionStatus: 'unsubscribed' },
        { email: 'bob@example.com', tags: ['VIP'], whatsappSubscriptionStatus: 'unsubscribed' },
        { email: 'adele@example.org', tags: ['vip'], emailSubscriptionStatus: 'unsubscribed', whatsappSubscriptionStatus: 'unsubscribed' },
        { email: 'carol@example.com' },
      ]);
      const [ada, adam, bob, adele, carol] = ids;
      return { ...tenant, ada, adam, bob, adele, carol };
    }

    const ids = async (key: string, query: Record<string, string>) => (await walk(key, { ...query, limit: 2 })).ids;

    it('tag: only contacts with exactly that tag, newest first', async () => {
      const f = await fixture();
      expect(await ids(f.key, { tag: 'vip' })).to.deep.equal([f.adele, f.ada]);
      expect(await ids(f.key, { tag: 'VIP' })).to.deep.equal([f.bob]);
      expect(await ids(f.key, { tag: 'none' })).to.deep.equal([]);
    });

    it('the subscription statuses', async () => {
      const f = await fixture();
      expect(await ids(f.key, { emailSubscriptionStatus: 'unsubscribed' })).to.deep.equal([f.adele, f.adam]);
      expect(await ids(f.key, { emailSubscriptionStatus: 'subscribed' })).to.deep.equal([f.carol, f.bob, f.ada]);
      expect(await ids(f.key, { whatsappSubscriptionStatus: 'unsubscribed' })).to.deep.equal([f.adele, f.bob]);
    });

    it('q: a case-insensitive prefix of the email', async () => {
      const f = await fixture();
      expect(await ids(f.key, { q: 'AD' })).to.deep.equal([f.adele, f.adam, f.ada]);
      expect(await ids(f.key, { q: 'ada' })).to.deep.equal([f.adam, f.ada]);
      expect(await ids(f.key, { q: 'ada@example.com' })).to.deep.equal([f.ada]);
      expect(await ids(f.key, { q: 'example' })).to.deep.equal([]);
      expect(await ids(f.key, { q: '%' })).to.deep.equal([]);
    });

    it('createdAfter and updatedSince are exclusive', async () => {
      const f = await fixture();
      // The n-th contact was created (and last changed) n minutes after 2026-01-01T00:00Z.
      expect(await ids(f.key, { createdAfter: '2026-01-01T00:02:00.000Z' })).to.deep.equal([f.carol, f.adele]);
      expect(await ids(f.key, { createdAfter: '2026-01-01T01:01:59.999+01:00' })).to.deep.equal([f.carol, f.adele, f.bob]);
      expect(await ids(f.key, { updatedSince: '2026-01-01T00:03:00Z', sort: 'updatedAt' })).to.deep.equal([f.carol]);
      expect(await ids(f.key, { updatedSince: '2026-01-01T00:02:59.999Z' })).to.deep.equal([f.carol, f.adele]);
    });

    it('combines filters: every one must hold', async () => {
      const f = await fixture();
      expect(await ids(f.key, { tag: 'vip', emailSubscriptionStatus: 'unsubscribed' })).to.deep.equal([f.adele]);
      expect(await ids(f.key, { tag: 'news', q: 'ada' })).to.deep.equal([f.adam, f.ada]);
      expect(await ids(f.key, { q: 'ad', whatsappSubscriptionStatus: 'unsubscribed', emailSubscriptionStatus: 'unsubscribed' })).to.deep.equal([
        f.adele,
      ]);
      expect(await ids(f.key, { tag: 'vip', createdAfter: '2026-01-01T00:00:00.000Z' })).to.deep.equal([f.adele]);
      expect(await ids(f.key, { tag: 'vip', sort: 'updatedAt' })).to.deep.equal([f.ada, f.adele]);
      expect(await ids(f.key, { emailSubscriptionStatus: 'subscribed', sort: 'updatedAt', updatedSince: '2026-01-01T00:00:00Z' })).to.deep.equal([
        f.bob,
        f.carol,
      ]);
    });

    it('follows tag changes: add, remove, replace, upsert, batch and delete keep the tag filter in step', async () => {
      const { accountId, key } = await buildTenant();
      const one = await buildContact(accountId, { email: 'one@x.io', tags: ['a'] });
      await api(key).post(`/contacts/${one.id}/tags`).send({ tags: ['b'] }).expect(200);
      expect(await ids(key, { tag: 'b' })).to.deep.equal([one.id]);
      await api(key).delete(`/contacts/${one.id}/tags`).send({ tags: ['a'] }).expect(200);
      expect(await ids(key, { tag: 'a' })).to.deep.equal([]);
      await api(key).put(`/contacts/${one.id}`).send({ tags: ['c'] }).expect(200);
      expect(await ids(key, { tag: 'b' })).to.deep.equal([]);
      expect(await ids(key, { tag: 'c' })).to.deep.equal([one.id]);
      await api(key).post('/contacts/upsert').send({ email: 'ONE@x.io', tags: ['d'] }).expect(200);
      await api(key).post('/contacts/batch').send({ contacts: [{ email: 'two@x.io', tags: ['d'] }] }).expect(201);
      const two = (await list(key, { q: 'two' })).contacts[0];
      expect((await ids(key, { tag: 'd' })).sort()).to.deep.equal([one.id, two.id].sort());
      expect(await ids(key, { tag: 'c' })).to.deep.equal([]);
      await api(key).delete(`/contacts/${one.id}`).expect(204);
      expect(await ids(key, { tag: 'd' })).to.deep.equal([two.id]);
      // A change moves the contact in the tag walk by updatedAt too.
      await api(key).patch(`/contacts/${two.id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }).expect(200);
      const [listed] = (await listContacts(testDb(), { accountId, tag: 'd', sort: 'updatedAt', limit: 10 }, settled)).items;
      expect(listed).to.include({ id: two.id, emailSubscriptionStatus: 'unsubscribed' });
    });
  });

  describe('q: every length of prefix, combined, and in step with email changes', () => {
    async function fixture() {
      const tenant = await buildTenant();
      const ids = await contactsAt(tenant.accountId, [
        { email: 'Ada@Example.com', tags: ['vip', 'news'] },
        { email: 'adam@example.com', tags: ['news'], emailSubscriptionStatus: 'unsubscribed' },
        { email: 'bob@example.com', tags: ['VIP'], whatsappSubscriptionStatus: 'unsubscribed' },
        { email: 'adele@example.org', tags: ['vip'], emailSubscriptionStatus: 'unsubscribed', whatsappSubscriptionStatus: 'unsubscribed' },
        { email: 'Ádám@example.com', tags: ['news'] },
      ]);
      const [ada, adam, bob, adele, accented] = ids;
      return { ...tenant, ada, adam, bob, adele, accented };
    }
    const ids = async (key: string, query: Record<string, string>) => (await walk(key, { ...query, limit: 2 })).ids;

    // The mirror holds the first 1..4 characters; longer prefixes are checked on the contact.
    it('finds the same contacts for a q of 1 to 4 characters and for a longer one', async () => {
      const f = await fixture();
      expect(await ids(f.key, { q: 'a' })).to.deep.equal([f.adele, f.adam, f.ada]);
      expect(await ids(f.key, { q: 'Ad' })).to.deep.equal([f.adele, f.adam, f.ada]);
      expect(await ids(f.key, { q: 'ada' })).to.deep.equal([f.adam, f.ada]);
      expect(await ids(f.key, { q: 'adam' })).to.deep.equal([f.adam]);
      expect(await ids(f.key, { q: 'ADAM@' })).to.deep.equal([f.adam]);
      expect(await ids(f.key, { q: 'adele@example.org' })).to.deep.equal([f.adele]);
      expect(await ids(f.key, { q: 'adele@example.orgx' })).to.deep.equal([]);
      expect(await ids(f.key, { q: 'b' })).to.deep.equal([f.bob]);
      expect(await ids(f.key, { q: 'c' })).to.deep.equal([]);
      // Characters, not bytes: `Ádám@` is five characters and more bytes.
      expect(await ids(f.key, { q: 'á' })).to.deep.equal([f.accented]);
      expect(await ids(f.key, { q: 'ÁDÁM' })).to.deep.equal([f.accented]);
      expect(await ids(f.key, { q: 'ádám@e' })).to.deep.equal([f.accented]);
    });

    it('combines q of either length with tag, statuses, createdAfter, updatedSince and sort=updatedAt', async () => {
      const f = await fixture();
      for (const [short, long] of [['ad', 'adam@'], ['ade', 'adele@example']]) {
        expect(await ids(f.key, { q: short, tag: 'vip' }), short).to.deep.equal(short === 'ad' ? [f.adele, f.ada] : [f.adele]);
        expect(await ids(f.key, { q: long, tag: 'news' }), long).to.deep.equal(long === 'adam@' ? [f.adam] : []);
      }
      expect(await ids(f.key, { q: 'ad', emailSubscriptionStatus: 'unsubscribed' })).to.deep.equal([f.adele, f.adam]);
      expect(await ids(f.key, { q: 'adele@', whatsappSubscriptionStatus: 'unsubscribed' })).to.deep.equal([f.adele]);
      expect(await ids(f.key, { q: 'adele@', whatsappSubscriptionStatus: 'subscribed' })).to.deep.equal([]);
      expect(await ids(f.key, { q: 'ad', createdAfter: '2026-01-01T00:00:00.000Z' })).to.deep.equal([f.adele, f.adam]);
      expect(await ids(f.key, { q: 'adam@example', createdAfter: '2026-01-01T00:01:00.000Z' })).to.deep.equal([]);
      expect(await ids(f.key, { q: 'ad', sort: 'updatedAt' })).to.deep.equal([f.ada, f.adam, f.adele]);
      expect(await ids(f.key, { q: 'ad', sort: 'updatedAt', updatedSince: '2026-01-01T00:01:00.000Z' })).to.deep.equal([f.adele]);
      expect(await ids(f.key, { q: 'ada@example', sort: 'updatedAt', tag: 'vip' })).to.deep.equal([f.ada]);
    });

    it(`walks a longer q with ${SORTED_PREFIX_MATCHES} matches or more in order, each once, either sort`, async () => {
      const { accountId } = await buildTenant();
      const contacts = Array.from({ length: 300 }, (_, i) => ({
        email: `${i % 5 === 0 ? 'manx' : 'many'}-${i}@x.io`,
        tags: i % 2 === 0 ? ['even'] : [],
      }));
      for (let i = 0; i < contacts.length; i += 100) {
        await batchUpsertContacts(testDb(), { accountId, contacts: contacts.slice(i, i + 100) });
      }
      // Through the service, on a clock past the settle window of sort=updatedAt (these were all just written).
      const walked = (filters: ContactListFilters) => settledWalk(accountId, filters, 7);
      const expected = async (like: string, order: string, tag?: string) =>
        (
          (await testDb().sequelize.query(
            `SELECT c.id FROM contacts c WHERE c.account_id = ? AND c.email_normalized LIKE ?
               ${tag ? 'AND EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag = ?)' : ''} ORDER BY ${order}`,
            { replacements: [accountId, like, ...(tag ? [tag] : [])], type: 'SELECT' },
          )) as Array<{ id: string }>
        ).map((row) => row.id);
      const newest = 'c.created_at DESC, c.id DESC';
      const oldestChange = 'c.updated_at ASC, c.id ASC';
      // 240 emails start with `many-`: more than are sorted, so the walk of `many`'s rows.
      expect(await walked({ q: 'MANY-' })).to.deep.equal(await expected('many-%', newest)).and.to.have.length(240);
      expect(await walked({ q: 'many-', sort: 'updatedAt' })).to.deep.equal(await expected('many-%', oldestChange));
      expect(await walked({ q: 'many-', tag: 'even' })).to.deep.equal(await expected('many-%', newest, 'even'));
      // 60 start with `manx-`, 89 with `many-1`: read from the email index and sorted.
      expect(await walked({ q: 'manx-' })).to.deep.equal(await expected('manx-%', newest)).and.to.have.length(60);
      expect(await walked({ q: 'many-1', sort: 'updatedAt' })).to.deep.equal(await expected('many-1%', oldestChange));
      expect(await walked({ q: 'man' })).to.deep.equal(await expected('man%', newest)).and.to.have.length(300);
    });

    async function mirrorRows(contactId: string) {
      return (await testDb().sequelize.query(
        `SELECT p.prefix, p.created_at = c.created_at AS same_created, p.updated_at = c.updated_at AS same_updated
           FROM contact_email_prefixes p JOIN contacts c ON c.id = p.contact_id WHERE p.contact_id = ? ORDER BY p.prefix`,
        { replacements: [contactId], type: 'SELECT' },
      )) as Array<{ prefix: string; same_created: number | string; same_updated: number | string }>;
    }

    it('moves a contact between prefixes when its email changes, keeps its timestamps, and forgets it when deleted', async () => {
      const { accountId, key } = await buildTenant();
      const zed = await buildContact(accountId, { email: 'Zed@x.io' });
      const other = await buildContact(accountId, { email: 'zebra-other@x.io' });
      expect(await ids(key, { q: 'zed' })).to.deep.equal([zed.id]);

      await api(key).put(`/contacts/${zed.id}`).send({ email: 'Zebra@x.io' }).expect(200);
      expect(await ids(key, { q: 'zed' })).to.deep.equal([]);
      expect(await ids(key, { q: 'zeb' })).to.deep.equal([other.id, zed.id]);
      expect(await ids(key, { q: 'zebra@' })).to.deep.equal([zed.id]);
      expect(await settledWalk(accountId, { q: 'z', sort: 'updatedAt' })).to.deep.equal([other.id, zed.id]);
      const rows = await mirrorRows(zed.id);
      expect(rows.map((row) => row.prefix)).to.deep.equal(['z', 'ze', 'zeb', 'zebr']);
      expect(rows.every((row) => Number(row.same_created) === 1 && Number(row.same_updated) === 1)).to.equal(true);

      // Other changes move updated_at in the mirror too; an upsert by another case keeps the prefixes.
      await api(key).patch(`/contacts/${other.id}/subscriptions`).send({ emailSubscriptionStatus: 'unsubscribed' }).expect(200);
      expect(await settledWalk(accountId, { q: 'z', sort: 'updatedAt' })).to.deep.equal([zed.id, other.id]);
      await api(key).post('/contacts/upsert').send({ email: 'ZEBRA@X.IO', firstName: 'Z' }).expect(200);
      expect(await settledWalk(accountId, { q: 'zebr', sort: 'updatedAt' })).to.deep.equal([other.id, zed.id]);
      expect((await mirrorRows(zed.id)).map((row) => [row.prefix, Number(row.same_updated)])).to.deep.equal([
        ['z', 1], ['ze', 1], ['zeb', 1], ['zebr', 1],
      ]);

      // An email shorter than the mirror's prefixes has as many rows as characters.
      await api(key).put(`/contacts/${zed.id}`).send({ email: 'y@x.io' }).expect(200);
      expect((await mirrorRows(zed.id)).map((row) => row.prefix)).to.deep.equal(['y', 'y@', 'y@x', 'y@x.']);
      expect(await ids(key, { q: 'z' })).to.deep.equal([other.id]);

      await api(key).delete(`/contacts/${zed.id}`).expect(204);
      expect(await mirrorRows(zed.id)).to.deep.equal([]);
      expect(await ids(key, { q: 'y' })).to.deep.equal([]);
    });
  });

  describe('bad input: 400 naming the problem, in the service\'s 400 shape', () => {
    it('limit outside 1..200 or not an integer', async () => {
      const { key } = await buildTenant();
      for (const limit of ['0', '201', '1.5', 'ten', '-3']) {
        const body = await badRequest(key, { limit });
        expect(body.error).to.equal('limit: limit must be an integer from 1 to 200');
        expect(body.details).to.deep.equal([{ path: 'limit', message: 'limit must be an integer from 1 to 200' }]);
      }
    });

    it('a cursor that is not one, was edited, or belongs to another filter, sort, list or account', async () => {
      const { accountId, key } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: Array.from({ length: 3 }, (_, i) => ({ email: `c${i}@x.io`, tags: ['t'] })) });
      const cursor = (await list(key, { limit: 1 })).nextCursor!;
      const tagged = (await list(key, { limit: 1, tag: 't' })).nextCursor!;
      const other = await buildTenant();
      const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString());
      decoded[1] += 1;
      const edited = Buffer.from(JSON.stringify(decoded)).toString('base64url');

      const { sequenceId, sequenceCursor } = await (async () => {
        await buildSequence(accountId);
        await buildSequence(accountId);
        const res = await api(key).get('/sequences').query({ limit: 1 });
        return { sequenceId: res.body.sequences[0].id, sequenceCursor: res.body.nextCursor as string };
      })();
      expect(sequenceId).to.be.a('string');

      const cases: Array<[string, Record<string, string>]> = [
        ['garbage', { cursor: 'not-a-cursor' }],
        ['edited', { cursor: edited }],
        ['another filter', { cursor, tag: 't' }],
        ['the tag walk without its tag', { cursor: tagged }],
        ['another sort', { cursor, sort: 'updatedAt' }],
        ['another list', { cursor: sequenceCursor }],
      ];
      for (const [, query] of cases) {
        const body = await badRequest(key, { limit: 1, ...query });
        expect(body.error).to.match(/^cursor: Invalid cursor/);
        expect(body.details?.[0].path).to.equal('cursor');
      }
      const foreign = await api(other.key).get('/contacts').query({ limit: 1, cursor });
      expect(foreign.status).to.equal(400);
      expect(foreign.body.error).to.match(/^cursor: Invalid cursor/);
      // The same cursor still works where it was issued.
      expect((await list(key, { limit: 1, cursor })).contacts).to.have.length(1);
    });

    it('bad filter values, and an unknown parameter', async () => {
      const { key } = await buildTenant();
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ emailSubscriptionStatus: 'maybe' }, /^emailSubscriptionStatus: /],
        [{ whatsappSubscriptionStatus: 'SUBSCRIBED' }, /^whatsappSubscriptionStatus: /],
        [{ sort: 'email' }, /^sort: /],
        [{ createdAfter: 'yesterday' }, /^createdAfter: createdAfter must be an ISO 8601 date-time/],
        [{ updatedSince: '2026-01-01' }, /^updatedSince: updatedSince must be an ISO 8601 date-time/],
        [{ q: '   ' }, /^q: q must not be empty/],
        [{ tag: 'x'.repeat(65) }, /^tag: /],
        [{ tags: 'vip' }, /tags/],
      ];
      for (const [query, message] of cases) {
        const body = await badRequest(key, query);
        expect(body.error, JSON.stringify(query)).to.match(message);
      }
    });

    it('writes nothing and answers 401 before 400', async () => {
      const res = await api().get('/contacts').query({ limit: 0 });
      expect(res.status).to.equal(401);
    });
  });

  describe('account isolation', () => {
    it('lists only the key\'s account, whatever the filter', async () => {
      const mine = await buildTenant();
      const theirs = await buildTenant();
      const own = await buildContact(mine.accountId, { email: 'same@x.io', tags: ['shared'] });
      const foreign = [
        await buildContact(theirs.accountId, { email: 'same@x.io', tags: ['shared'] }),
        await buildContact(theirs.accountId, { email: 'other@x.io', tags: ['shared'] }),
      ];
      // Older than the settle window, so that sort=updatedAt lists them too.
      const past = new Date(Date.now() - 3_600_000);
      for (const contact of [own, ...foreign]) await setTimestamps(contact.id, past, past);
      const queries: Array<Record<string, string>> = [
        {},
        { tag: 'shared' },
        { q: 's' },
        { q: 's', tag: 'shared' },
        { sort: 'updatedAt' },
        { emailSubscriptionStatus: 'subscribed' },
      ];
      for (const query of queries) {
        expect((await walk(mine.key, query)).ids, JSON.stringify(query)).to.deep.equal([own.id]);
      }
    });
  });

  describe('over tRPC: contacts.list', () => {
    it('answers the same page and the same 400s', async () => {
      const { accountId, key } = await buildTenant();
      await batchUpsertContacts(testDb(), { accountId, contacts: [{ email: 'a@x.io', tags: ['t'] }, { email: 'b@x.io' }] });
      const rest = await list(key, { limit: 1 });
      const trpc = await caller(key).contacts.list({ limit: 1 });
      expect(trpc.contacts).to.deep.equal(rest.contacts);
      const next = await caller(key).contacts.list({ limit: 1, cursor: trpc.nextCursor! });
      expect(next.contacts.map((c) => c.id)).to.deep.equal((await list(key, { limit: 1, cursor: rest.nextCursor! })).contacts.map((c) => c.id));
      expect([trpc.contacts[0].email, next.contacts[0].email].sort()).to.deep.equal(['a@x.io', 'b@x.io']);
      expect(next.nextCursor).to.equal(null);
      expect((await caller(key).contacts.list({ tag: 't' })).contacts.map((c) => c.email)).to.deep.equal(['a@x.io']);

      expect((await trpcRejection(caller(key).contacts.list({ limit: 500 }))).code).to.equal('BAD_REQUEST');
      const bad = await trpcRejection(caller(key).contacts.list({ cursor: 'nope' }));
      expect(bad.code).to.equal('BAD_REQUEST');
      expect(bad.message).to.match(/^cursor: Invalid cursor/);
    });
  });
});
