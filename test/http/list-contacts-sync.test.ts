import { expect } from 'chai';
import { execute } from '../../src/db/sql/statements';
import type { ContactDto } from '../../src/schemas/contact';
import { batchUpsertContacts, updateContact } from '../../src/services/contacts/contact-operations';
import { listContacts, UPDATED_SORT_SETTLE_MS, type ContactListFilters } from '../../src/services/contacts/list-contacts';
import { api, caller } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { trpcRejection } from '../support/trpc';

// GET /contacts?sort=updatedAt as a sync feed: a walk ends, lists each contact at most once,
// and hands out a resumeCursor from which a later walk lists every change made since. Changes
// younger than the settle window are not listed yet; the tests move the list's clock past the
// window instead of waiting for it.

interface Listed {
  id: string;
  email: string;
  updatedAt: string;
  customFields: Record<string, unknown>;
}

interface SyncAnswer {
  contacts: Listed[];
  nextCursor: string | null;
  resumeCursor: string | null;
  caughtUpTo: string | null;
  retryAfterMs: number | null;
}

const INVALID =
  'Invalid cursor: pass the nextCursor of the previous page, or the resumeCursor of a sort=updatedAt walk, as given, ' +
  'with the same filters and sort';

// The service's clock, this far ahead of the real one.
function clockAhead(ms: number) {
  return { now: () => new Date(Date.now() + ms) };
}
const PAST_THE_WINDOW = clockAhead(UPDATED_SORT_SETTLE_MS + 1_000);

// n contacts, the i-th last changed i minutes after `from` (and created then), in that order.
async function contactsChangedAt(accountId: string, from: Date, emails: string[]): Promise<string[]> {
  await batchUpsertContacts(testDb(), { accountId, contacts: emails.map((email) => ({ email, tags: ['sync'] })) });
  const ids: string[] = [];
  for (const [i, email] of emails.entries()) {
    const [row] = (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ? AND email_normalized = ?', {
      replacements: [accountId, email],
      type: 'SELECT',
    })) as Array<{ id: string }>;
    const at = new Date(from.getTime() + i * 60_000);
    for (const table of ['contacts', 'contact_tags', 'contact_email_prefixes']) {
      await execute(testDb(), `UPDATE ${table} SET created_at = ?, updated_at = ? WHERE ${table === 'contacts' ? 'id' : 'contact_id'} = ?`, [at, at, row.id]);
    }
    ids.push(row.id);
  }
  return ids;
}

// The account's contacts last changed after the instant, oldest change first (ties by id).
async function changedAfter(accountId: string, instant: Date | string): Promise<string[]> {
  const rows = (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ? AND updated_at > ? ORDER BY updated_at, id', {
    replacements: [accountId, new Date(instant)],
    type: 'SELECT',
  })) as Array<{ id: string }>;
  return rows.map((row) => row.id);
}

async function page(key: string, query: Record<string, string | number>): Promise<SyncAnswer> {
  const res = await api(key).get('/contacts').query(query);
  expect(res.status, res.text).to.equal(200);
  return res.body as SyncAnswer;
}

// One walk through the service: pages until nextCursor is null (at most maxPages).
async function serviceWalk(
  accountId: string,
  filters: ContactListFilters & { cursor?: string; limit?: number },
  clock: { now: () => Date },
  maxPages = 50,
) {
  const items: ContactDto[] = [];
  let cursor = filters.cursor;
  for (let pages = 1; pages <= maxPages; pages += 1) {
    const answer = await listContacts(testDb(), { accountId, sort: 'updatedAt', limit: 2, ...filters, cursor }, clock);
    items.push(...answer.items);
    if (answer.nextCursor === null) return { items, pages, sync: answer.sync! };
    cursor = answer.nextCursor;
  }
  throw new Error(`the walk did not end in ${maxPages} pages`);
}

describe('GET /contacts?sort=updatedAt: a sync feed that ends and resumes', () => {
  it('ends a walk over contacts changed just now, listing the settled ones once and telling "caught up" from "more"', async () => {
    const { accountId, key } = await buildTenant();
    const settled = await contactsChangedAt(accountId, new Date(Date.now() - 3_600_000), ['s0@x.io', 's1@x.io', 's2@x.io']);
    // Changed just now: before, a page of these came back again and again with a new nextCursor.
    await batchUpsertContacts(testDb(), { accountId, contacts: ['r0@x.io', 'r1@x.io', 'r2@x.io', 'r3@x.io'].map((email) => ({ email })) });

    const before = Date.now();
    const first = await page(key, { sort: 'updatedAt', limit: 2 });
    expect(first.contacts.map((c) => c.id)).to.deep.equal(settled.slice(0, 2));
    expect(first.nextCursor).to.be.a('string');
    expect(first).to.include({ resumeCursor: null, caughtUpTo: null, retryAfterMs: null });

    const last = await page(key, { sort: 'updatedAt', limit: 2, cursor: first.nextCursor! });
    const after = Date.now();
    expect(last.contacts.map((c) => c.id)).to.deep.equal(settled.slice(2));
    expect(last.nextCursor).to.equal(null);
    expect(last.resumeCursor).to.be.a('string');
    expect(last.retryAfterMs).to.equal(UPDATED_SORT_SETTLE_MS);
    // The walk's horizon: its first page's time less the settle window.
    const caughtUpTo = Date.parse(last.caughtUpTo!);
    expect(caughtUpTo).to.be.within(before - UPDATED_SORT_SETTLE_MS, after - UPDATED_SORT_SETTLE_MS);

    // Straight back with the resumeCursor: the recent changes are not settled yet, and the feed
    // says so again rather than looping.
    const soon = await page(key, { sort: 'updatedAt', limit: 2, cursor: last.resumeCursor! });
    expect(soon.contacts).to.deep.equal([]);
    expect(soon.nextCursor).to.equal(null);
    expect(soon.resumeCursor).to.be.a('string');

    // Once the window has passed, the same resumeCursor lists the recent changes, once each.
    const later = await serviceWalk(accountId, { cursor: soon.resumeCursor! }, PAST_THE_WINDOW);
    const recent = await changedAfter(accountId, new Date(before - 60_000));
    expect(later.items.map((c) => c.id)).to.deep.equal(recent).and.to.have.length(4);
    expect(later.items.map((c) => c.email).sort()).to.deep.equal(['r0@x.io', 'r1@x.io', 'r2@x.io', 'r3@x.io']);
    expect(later.pages).to.equal(2);
  });

  it('answers the default order with exactly the fields it always had', async () => {
    const { accountId, key } = await buildTenant();
    await contactsChangedAt(accountId, new Date(Date.now() - 3_600_000), ['a@x.io', 'b@x.io']);
    for (const query of [{ limit: 1 }, { limit: 5 }, { limit: 1, sort: 'createdAt' }]) {
      const res = await api(key).get('/contacts').query(query);
      expect(Object.keys(res.body).sort(), JSON.stringify(query)).to.deep.equal(['contacts', 'nextCursor']);
    }
    const updated = await api(key).get('/contacts').query({ sort: 'updatedAt', limit: 1 });
    expect(Object.keys(updated.body).sort()).to.deep.equal(['caughtUpTo', 'contacts', 'nextCursor', 'resumeCursor', 'retryAfterMs']);
    // tRPC answers the same.
    const trpc = await caller(key).contacts.list({ sort: 'updatedAt', limit: 1 });
    expect(trpc.contacts.map((c) => c.id)).to.deep.equal(updated.body.contacts.map((c: Listed) => c.id));
    expect(trpc).to.include({ resumeCursor: null, caughtUpTo: null, retryAfterMs: null });
    expect(trpc.nextCursor).to.be.a('string');
  });

  it('resumed later, lists every change made since, once each, in the order made; a stopped walk continues first', async () => {
    const { accountId } = await buildTenant();
    const ids = await contactsChangedAt(accountId, new Date(Date.now() - 3_600_000), ['c0@x.io', 'c1@x.io', 'c2@x.io', 'c3@x.io', 'c4@x.io']);
    const realClock = clockAhead(0);

    // A client syncs everything and keeps the resumeCursor.
    const initial = await serviceWalk(accountId, {}, realClock);
    expect(initial.items.map((c) => c.id)).to.deep.equal(ids);
    const resumeCursor = initial.sync.resumeCursor!;

    // Meanwhile: c3 changes twice, c1 once, a contact is created. Then a quiet resume finds
    // none of it yet (not settled), and says where to come back from.
    await updateContact(testDb(), { accountId, id: ids[3], customFields: { v: 1 } });
    await updateContact(testDb(), { accountId, id: ids[1], customFields: { v: 1 } });
    await batchUpsertContacts(testDb(), { accountId, contacts: [{ email: 'c5@x.io', tags: ['sync'] }] });
    await updateContact(testDb(), { accountId, id: ids[3], customFields: { v: 2 } });
    const early = await serviceWalk(accountId, { cursor: resumeCursor }, realClock);
    expect(early.items).to.deep.equal([]);

    // Past the window: the changes, each contact once with its latest state, oldest change first.
    const resumed = await serviceWalk(accountId, { cursor: early.sync.resumeCursor! }, PAST_THE_WINDOW);
    const created = (await listContacts(testDb(), { accountId, q: 'c5', limit: 1 })).items[0].id;
    const changes = await changedAfter(accountId, initial.sync.caughtUpTo!);
    expect([...changes].sort()).to.deep.equal([ids[1], ids[3], created].sort());
    expect(resumed.items.map((c) => c.id)).to.deep.equal(changes);
    const state = Object.fromEntries(resumed.items.map((c) => [c.id, c.customFields]));
    expect(state).to.deep.equal({ [ids[1]]: { v: 1 }, [created]: {}, [ids[3]]: { v: 2 } });
    expect(Date.parse(resumed.sync.caughtUpTo!)).to.be.greaterThan(Date.parse(initial.sync.caughtUpTo!));
    // And then nothing more, until something changes.
    expect((await serviceWalk(accountId, { cursor: resumed.sync.resumeCursor! }, PAST_THE_WINDOW)).items).to.deep.equal([]);

    // A client that stopped mid-walk keeps its nextCursor. Continued later, it finishes that walk:
    // nothing it had listed comes again, and what changed since comes in the next walk.
    const stopped = await listContacts(testDb(), { accountId, sort: 'updatedAt', limit: 2 }, realClock);
    expect(stopped.items.map((c) => c.id)).to.deep.equal([ids[0], ids[2]]);
    await updateContact(testDb(), { accountId, id: ids[0], customFields: { v: 3 } });
    await updateContact(testDb(), { accountId, id: ids[4], customFields: { v: 3 } });
    const finished = await serviceWalk(accountId, { cursor: stopped.nextCursor! }, PAST_THE_WINDOW);
    expect(finished.items).to.deep.equal([]);
    const next = await serviceWalk(accountId, { cursor: finished.sync.resumeCursor! }, PAST_THE_WINDOW);
    const sinceStart = await changedAfter(accountId, initial.sync.caughtUpTo!);
    expect([...sinceStart].sort()).to.deep.equal([ids[0], ids[1], ids[3], ids[4], created].sort());
    expect(next.items.map((c) => c.id)).to.deep.equal(sinceStart);
  });

  it('gives a resumeCursor passed back before the window has passed back unchanged, with nothing listed', async () => {
    const { accountId } = await buildTenant();
    await contactsChangedAt(accountId, new Date(Date.now() - 3_600_000), ['e0@x.io']);
    // A clock ahead: its horizon lies after the real clock's, so the real clock must wait for it.
    const ahead = await serviceWalk(accountId, {}, clockAhead(60_000));
    const back = await serviceWalk(accountId, { cursor: ahead.sync.resumeCursor! }, clockAhead(0));
    expect(back.items).to.deep.equal([]);
    expect(back.sync.resumeCursor).to.equal(ahead.sync.resumeCursor);
    expect(back.sync.caughtUpTo).to.equal(ahead.sync.caughtUpTo);
  });

  describe('bad cursors: 400 naming the cursor', () => {
    async function cursors() {
      const { accountId, key } = await buildTenant();
      await contactsChangedAt(accountId, new Date(Date.now() - 3_600_000), ['b0@x.io', 'b1@x.io', 'b2@x.io']);
      const inWalk = (await page(key, { sort: 'updatedAt', limit: 1 })).nextCursor!;
      const resume = (await page(key, { sort: 'updatedAt', limit: 10 })).resumeCursor!;
      const created = (await page(key, { limit: 1 })).nextCursor!;
      return { accountId, key, inWalk, resume, created };
    }

    async function rejected(key: string, query: Record<string, string | number>) {
      const res = await api(key).get('/contacts').query(query);
      expect(res.status, `${JSON.stringify(query)}: ${res.text}`).to.equal(400);
      expect(res.body.error).to.equal(`cursor: ${INVALID}`);
      expect(res.body.details).to.deep.equal([{ path: 'cursor', message: INVALID }]);
    }

    const edit = (cursor: string, change: (fields: unknown[]) => void) => {
      const fields = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
      change(fields);
      return Buffer.from(JSON.stringify(fields)).toString('base64url');
    };

    it('another sort, filter or account, edited, or not a cursor', async () => {
      const { key, inWalk, resume, created } = await cursors();
      const other = await buildTenant();
      const cases: Array<[string, Record<string, string | number>, string?]> = [
        ['a resumeCursor without sort=updatedAt', { cursor: resume }],
        ['a walk\'s nextCursor without sort=updatedAt', { cursor: inWalk }],
        ['the default order\'s cursor with sort=updatedAt', { cursor: created, sort: 'updatedAt' }],
        ['a resumeCursor with another filter', { cursor: resume, sort: 'updatedAt', tag: 'sync' }],
        ['a nextCursor with another filter', { cursor: inWalk, sort: 'updatedAt', q: 'b' }],
        ['a horizon moved on', { cursor: edit(inWalk, (fields) => ((fields[3] as number) += 60_000)), sort: 'updatedAt' }],
        ['a horizon that is not a time', { cursor: edit(inWalk, (fields) => (fields[3] = 'later')), sort: 'updatedAt' }],
        ['a resumeCursor moved on', { cursor: edit(resume, (fields) => ((fields[1] as number) += 1)), sort: 'updatedAt' }],
        ['a horizon added to a resumeCursor', { cursor: edit(resume, (fields) => fields.splice(3, 0, 1)), sort: 'updatedAt' }],
        ['an unknown version', { cursor: edit(inWalk, (fields) => (fields[0] = 3)), sort: 'updatedAt' }],
        ['not a cursor', { cursor: 'resume-me', sort: 'updatedAt' }],
        ['another account\'s resumeCursor', { cursor: resume, sort: 'updatedAt' }, other.key],
      ];
      for (const [, query, as] of cases) await rejected(as ?? key, { limit: 1, ...query });
      // Where they were issued, they work.
      expect((await page(key, { sort: 'updatedAt', limit: 1, cursor: inWalk })).contacts).to.have.length(1);
      expect((await page(key, { sort: 'updatedAt', limit: 1, cursor: resume })).contacts).to.deep.equal([]);
    });

    it('over tRPC too', async () => {
      const { key, resume } = await cursors();
      const bad = await trpcRejection(caller(key).contacts.list({ cursor: resume }));
      expect(bad.code).to.equal('BAD_REQUEST');
      expect(bad.message).to.equal(`cursor: ${INVALID}`);
    });
  });
});
