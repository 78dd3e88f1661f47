import { expect } from 'chai';
import type { Express } from 'express';
import { select } from '../../src/db/sql/statements';
import { KEY_NOT_ACCEPTED } from '../../src/http/dashboard-api';
import { enrollContact } from '../../src/services/sequences/enroll-contact';
import { testDb } from '../support/db';
import { buildContact, buildSequence, buildTenant } from '../support/factories';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';

// The Contacts and Sequences procedures of the dashboard over HTTP, as the app calls them:
// the API's services and validation behind a session, within the signed-in account only.

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

function get(app: Express, path: string, input: unknown, cookie?: string) {
  return query(app, `${path}?input=${encodeURIComponent(JSON.stringify(input))}`, cookie);
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const [{ n }] = await select<{ n: unknown }>(testDb(), sql, values);
  return Number(n);
}

describe('dashboard contacts and sequences procedures', () => {
  let app: Express;
  let cookie: string;
  let accountId: string;
  // Another account, with its own key and contact: never visible to this session.
  let other: Awaited<ReturnType<typeof buildTenant>>;
  let foreignContactId: string;

  beforeEach(async () => {
    app = dashboardApp();
    const user = await buildUser();
    accountId = user.accountId;
    cookie = await signInCookie(app, user.email);
    other = await buildTenant();
    foreignContactId = (await buildContact(other.accountId, { email: 'theirs@example.com' })).id;
  });

  describe('contacts.list', () => {
    it('filters by email prefix, tag and subscription, and walks the pages by cursor', async () => {
      await buildContact(accountId, { email: 'ada@example.com', tags: ['vip'] });
      await buildContact(accountId, { email: 'Adam@example.com', whatsappSubscriptionStatus: 'unsubscribed' });
      await buildContact(accountId, { email: 'bob@example.com', tags: ['vip'] });
      const prefix = await get(app, 'dashboard.contacts.list', { q: 'ada' }, cookie);
      expect(prefix.status).to.equal(200);
      expect(prefix.body.result.data.contacts.map((c: { email: string }) => c.email)).to.deep.equal(['Adam@example.com', 'ada@example.com']);
      const tagged = await get(app, 'dashboard.contacts.list', { tag: 'vip', q: 'a' }, cookie);
      expect(tagged.body.result.data.contacts.map((c: { email: string }) => c.email)).to.deep.equal(['ada@example.com']);
      const unsubscribed = await get(app, 'dashboard.contacts.list', { whatsappSubscriptionStatus: 'unsubscribed' }, cookie);
      expect(unsubscribed.body.result.data.contacts.map((c: { email: string }) => c.email)).to.deep.equal(['Adam@example.com']);

      const first = await get(app, 'dashboard.contacts.list', { limit: 2 }, cookie);
      expect(first.body.result.data.contacts).to.have.length(2);
      const second = await get(app, 'dashboard.contacts.list', { limit: 2, cursor: first.body.result.data.nextCursor }, cookie);
      expect(second.body.result.data.contacts.map((c: { email: string }) => c.email)).to.deep.equal(['ada@example.com']);
      expect(second.body.result.data.nextCursor).to.equal(null);
    });

    it('answers bad input with 400 and the field, as the API does', async () => {
      const badStatus = await get(app, 'dashboard.contacts.list', { emailSubscriptionStatus: 'maybe' }, cookie);
      expect(badStatus.status).to.equal(400);
      expect(badStatus.body.error.data.details[0].path).to.equal('emailSubscriptionStatus');
      const badCursor = await get(app, 'dashboard.contacts.list', { cursor: 'not-a-cursor' }, cookie);
      expect(badCursor.status).to.equal(400);
      const other = await get(app, 'dashboard.contacts.list', { tags: 'vip' }, cookie);
      expect(other.status).to.equal(400);
    });
  });

  describe('contacts.get and contacts.runs', () => {
    it('answers the contact and its runs, and 404 for a contact of another account or none', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const sequence = await buildSequence(accountId, 'active');
      await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'ada@example.com' } });
      const got = await get(app, 'dashboard.contacts.get', { id: contact.id }, cookie);
      expect(got.status).to.equal(200);
      expect(got.body.result.data.contact).to.include({ id: contact.id, email: 'ada@example.com' });
      const runs = await get(app, 'dashboard.contacts.runs', { id: contact.id }, cookie);
      expect(runs.status).to.equal(200);
      expect(runs.body.result.data.runs).to.have.length(1);
      expect(runs.body.result.data.runs[0]).to.include({ sequenceId: sequence.id, contactId: contact.id, status: 'pending' });
      const cancelled = await get(app, 'dashboard.contacts.runs', { id: contact.id, status: 'cancelled' }, cookie);
      expect(cancelled.body.result.data.runs).to.deep.equal([]);

      for (const id of [foreignContactId, UNKNOWN_ID, 'not-a-uuid']) {
        for (const path of ['dashboard.contacts.get', 'dashboard.contacts.runs']) {
          const res = await get(app, path, { id }, cookie);
          expect(res.status, `${path} ${id}`).to.equal(404);
          expect(res.body.error.message).to.equal('Contact not found');
        }
      }
      const badStatus = await get(app, 'dashboard.contacts.runs', { id: contact.id, status: 'asleep' }, cookie);
      expect(badStatus.status).to.equal(400);
    });
  });

  describe('contacts.emails', () => {
    it('answers the emails of this account\'s contacts among the ids, in one call; others are absent', async () => {
      const ada = await buildContact(accountId, { email: 'ada@example.com' });
      const bob = await buildContact(accountId, { email: 'bob@example.com' });
      const res = await get(app, 'dashboard.contacts.emails', { ids: [ada.id, bob.id.toUpperCase(), foreignContactId, UNKNOWN_ID, 'nope'] }, cookie);
      expect(res.status).to.equal(200);
      expect(res.body.result.data.emails).to.deep.equal({ [ada.id]: 'ada@example.com', [bob.id]: 'bob@example.com' });
      const none = await get(app, 'dashboard.contacts.emails', { ids: [] }, cookie);
      expect(none.body.result.data.emails).to.deep.equal({});
    });

    it('refuses more than a page of ids, and no list', async () => {
      const many = await get(app, 'dashboard.contacts.emails', { ids: Array.from({ length: 201 }, () => UNKNOWN_ID) }, cookie);
      expect(many.status).to.equal(400);
      expect(many.body.error.data.details[0]).to.deep.equal({ path: 'ids', message: 'At most 200 ids' });
      expect((await get(app, 'dashboard.contacts.emails', {}, cookie)).status).to.equal(400);
    });
  });

  describe('contacts.update', () => {
    it('changes the fields given, clears with null, and refuses a taken email with 409', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com', firstName: 'Ada', phone: '+4477009001' });
      await buildContact(accountId, { email: 'bob@example.com' });
      const res = await mutate(app, 'dashboard.contacts.update', { id: contact.id, lastName: 'King', phone: null }, cookie);
      expect(res.status).to.equal(200);
      expect(res.body.result.data.contact).to.include({ firstName: 'Ada', lastName: 'King', phone: null });
      const [row] = await select<{ last_name: string; phone: string | null }>(testDb(), 'SELECT last_name, phone FROM contacts WHERE id = ?', [contact.id]);
      expect(row).to.deep.equal({ last_name: 'King', phone: null });

      const taken = await mutate(app, 'dashboard.contacts.update', { id: contact.id, email: 'BOB@example.com' }, cookie);
      expect(taken.status).to.equal(409);
      expect(taken.body.error.message).to.equal('A contact with this email already exists');
      const foreign = await mutate(app, 'dashboard.contacts.update', { id: foreignContactId, firstName: 'Mine' }, cookie);
      expect(foreign.status).to.equal(404);
      expect(await count("SELECT COUNT(*) AS n FROM contacts WHERE first_name = 'Mine'")).to.equal(0);
    });

    it('answers an invalid field with 400 naming it, with the API\'s message, and writes nothing', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const res = await mutate(app, 'dashboard.contacts.update', { id: contact.id, email: 'not-an-email', firstName: 'Changed' }, cookie);
      expect(res.status).to.equal(400);
      expect(res.body.error.data.details).to.deep.equal([{ path: 'email', message: 'Invalid email address' }]);
      const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
      const custom = await mutate(app, 'dashboard.contacts.update', { id: contact.id, customFields: tooMany, firstName: 'Changed' }, cookie);
      expect(custom.status).to.equal(400);
      expect(custom.body.error.data.details).to.deep.equal([{ path: 'customFields', message: 'At most 100 custom fields' }]);
      expect(await count("SELECT COUNT(*) AS n FROM contacts WHERE first_name = 'Changed'")).to.equal(0);
    });
  });

  describe('contacts.updateSubscriptions, addTags, removeTags', () => {
    it('changes subscriptions and tags as stored', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com', tags: ['vip'] });
      const subscriptions = await mutate(app, 'dashboard.contacts.updateSubscriptions', { id: contact.id, emailSubscriptionStatus: 'unsubscribed' }, cookie);
      expect(subscriptions.status).to.equal(200);
      expect(subscriptions.body.result.data.contact).to.include({ emailSubscriptionStatus: 'unsubscribed', whatsappSubscriptionStatus: 'subscribed' });
      const added = await mutate(app, 'dashboard.contacts.addTags', { id: contact.id, tags: [' news ', 'vip'] }, cookie);
      expect(added.body.result.data.contact.tags).to.deep.equal(['vip', 'news']);
      const removed = await mutate(app, 'dashboard.contacts.removeTags', { id: contact.id, tags: ['vip', 'absent'] }, cookie);
      expect(removed.body.result.data.contact.tags).to.deep.equal(['news']);
      const [row] = await select<{ email_subscription_status: string; tags: unknown }>(
        testDb(),
        'SELECT email_subscription_status, tags FROM contacts WHERE id = ?',
        [contact.id],
      );
      expect(row.email_subscription_status).to.equal('unsubscribed');
      expect(typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags).to.deep.equal(['news']);
    });

    it('refuses bad input and other accounts\' contacts, and writes nothing', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const none = await mutate(app, 'dashboard.contacts.updateSubscriptions', { id: contact.id }, cookie);
      expect(none.status).to.equal(400);
      expect(none.body.error.message).to.equal('Give emailSubscriptionStatus or whatsappSubscriptionStatus');
      const wrong = await mutate(app, 'dashboard.contacts.updateSubscriptions', { id: contact.id, emailSubscriptionStatus: 'maybe' }, cookie);
      expect(wrong.status).to.equal(400);
      const long = await mutate(app, 'dashboard.contacts.addTags', { id: contact.id, tags: ['x'.repeat(65)] }, cookie);
      expect(long.status).to.equal(400);
      expect(long.body.error.data.details).to.deep.equal([{ path: 'tags.0', message: 'A tag must be at most 64 characters' }]);
      const empty = await mutate(app, 'dashboard.contacts.removeTags', { id: contact.id, tags: [] }, cookie);
      expect(empty.status).to.equal(400);
      for (const path of ['dashboard.contacts.addTags', 'dashboard.contacts.removeTags']) {
        const foreign = await mutate(app, path, { id: foreignContactId, tags: ['mine'] }, cookie);
        expect(foreign.status, path).to.equal(404);
      }
      const foreign = await mutate(app, 'dashboard.contacts.updateSubscriptions', { id: foreignContactId, emailSubscriptionStatus: 'unsubscribed' }, cookie);
      expect(foreign.status).to.equal(404);
      expect(await count("SELECT COUNT(*) AS n FROM contacts WHERE email_subscription_status = 'unsubscribed'")).to.equal(0);
      const [row] = await select<{ tags: unknown }>(testDb(), 'SELECT tags FROM contacts WHERE id = ?', [contact.id]);
      expect(typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags).to.deep.equal([]);
    });
  });

  describe('contacts.unenroll and contacts.delete', () => {
    it('cancels the contact\'s active run in the sequence, and says when there was none', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const sequence = await buildSequence(accountId, 'active');
      await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'ada@example.com' } });
      const res = await mutate(app, 'dashboard.contacts.unenroll', { id: contact.id, sequenceId: sequence.id }, cookie);
      expect(res.status).to.equal(200);
      expect(res.body.result.data).to.deep.equal({ cancelled: 1, contactIds: [contact.id] });
      expect(await count("SELECT COUNT(*) AS n FROM sequence_runs WHERE status = 'cancelled'")).to.equal(1);
      const again = await mutate(app, 'dashboard.contacts.unenroll', { id: contact.id, sequenceId: sequence.id }, cookie);
      expect(again.body.result.data).to.deep.equal({ cancelled: 0, contactIds: [] });
    });

    it('refuses an unknown or foreign sequence with 404 and a contact id that is not a UUID with 400', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const foreignSequence = await buildSequence(other.accountId, 'active');
      await enrollContact(testDb(), { accountId: other.accountId, sequenceId: foreignSequence.id, contact: { email: 'theirs@example.com' } });
      for (const sequenceId of [foreignSequence.id, UNKNOWN_ID]) {
        const res = await mutate(app, 'dashboard.contacts.unenroll', { id: contact.id, sequenceId }, cookie);
        expect(res.status).to.equal(404);
        expect(res.body.error.message).to.equal('Sequence not found');
      }
      const bad = await mutate(app, 'dashboard.contacts.unenroll', { id: 'ada', sequenceId: foreignSequence.id }, cookie);
      expect(bad.status).to.equal(400);
      expect(bad.body.error.data.details[0].path).to.equal('id');
      expect(await count("SELECT COUNT(*) AS n FROM sequence_runs WHERE status = 'cancelled'")).to.equal(0);
    });

    it('deletes the contact with its runs, then answers 404; never another account\'s', async () => {
      const contact = await buildContact(accountId, { email: 'ada@example.com' });
      const sequence = await buildSequence(accountId, 'active');
      await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'ada@example.com' } });
      const res = await mutate(app, 'dashboard.contacts.delete', { id: contact.id }, cookie);
      expect(res.status).to.equal(200);
      expect(await count('SELECT COUNT(*) AS n FROM contacts WHERE id = ?', [contact.id])).to.equal(0);
      expect(await count('SELECT COUNT(*) AS n FROM sequence_runs')).to.equal(0);
      const again = await mutate(app, 'dashboard.contacts.delete', { id: contact.id }, cookie);
      expect(again.status).to.equal(404);
      const foreign = await mutate(app, 'dashboard.contacts.delete', { id: foreignContactId }, cookie);
      expect(foreign.status).to.equal(404);
      expect(await count('SELECT COUNT(*) AS n FROM contacts WHERE id = ?', [foreignContactId])).to.equal(1);
      const bad = await mutate(app, 'dashboard.contacts.delete', {}, cookie);
      expect(bad.status).to.equal(400);
    });
  });

  describe('sequences', () => {
    it('creates a draft, lists it with its active-run count, changes its status and lists its runs by status', async () => {
      const created = await mutate(app, 'dashboard.sequences.create', { name: '  Welcome  ' }, cookie);
      expect(created.status).to.equal(200);
      const sequence = created.body.result.data.sequence;
      expect(sequence).to.include({ name: 'Welcome', status: 'draft', accountId });

      const active = await mutate(app, 'dashboard.sequences.setStatus', { id: sequence.id, status: 'active' }, cookie);
      expect(active.status).to.equal(200);
      expect(active.body.result.data.sequence.status).to.equal('active');
      const [row] = await select<{ status: string }>(testDb(), 'SELECT status FROM sequences WHERE id = ?', [sequence.id]);
      expect(row.status).to.equal('active');

      const outcome = await enrollContact(testDb(), { accountId, sequenceId: sequence.id, contact: { email: 'ada@example.com' } });
      const list = await get(app, 'dashboard.sequences.list', {}, cookie);
      expect(list.status).to.equal(200);
      expect(list.body.result.data.sequences).to.have.length(1);
      expect(list.body.result.data.sequences[0]).to.include({ id: sequence.id, status: 'active', activeRuns: 1 });
      const drafts = await get(app, 'dashboard.sequences.list', { status: 'draft' }, cookie);
      expect(drafts.body.result.data.sequences).to.deep.equal([]);
      const got = await get(app, 'dashboard.sequences.get', { id: sequence.id }, cookie);
      expect(got.body.result.data.sequence).to.include({ name: 'Welcome', activeRuns: 1 });

      const pending = await get(app, 'dashboard.sequences.runs', { id: sequence.id, status: 'pending' }, cookie);
      expect(pending.body.result.data.runs.map((r: { contactId: string }) => r.contactId)).to.deep.equal([outcome.contactId]);
      const completed = await get(app, 'dashboard.sequences.runs', { id: sequence.id, status: 'completed' }, cookie);
      expect(completed.body.result.data.runs).to.deep.equal([]);
    });

    it('answers 404 for another account\'s sequence, and 400 for bad input, writing nothing', async () => {
      const foreign = await buildSequence(other.accountId, 'active');
      for (const path of ['dashboard.sequences.get', 'dashboard.sequences.runs']) {
        for (const id of [foreign.id, UNKNOWN_ID]) {
          const res = await get(app, path, { id }, cookie);
          expect(res.status, `${path} ${id}`).to.equal(404);
          expect(res.body.error.message).to.equal('Sequence not found');
        }
      }
      const paused = await mutate(app, 'dashboard.sequences.setStatus', { id: foreign.id, status: 'paused' }, cookie);
      expect(paused.status).to.equal(404);
      expect(paused.body.error.message).to.equal('Sequence not found');
      const [row] = await select<{ status: string }>(testDb(), 'SELECT status FROM sequences WHERE id = ?', [foreign.id]);
      expect(row.status).to.equal('active');

      const noName = await mutate(app, 'dashboard.sequences.create', { name: '   ' }, cookie);
      expect(noName.status).to.equal(400);
      expect(noName.body.error.data.details).to.deep.equal([{ path: 'name', message: 'must not be empty' }]);
      const badStatus = await mutate(app, 'dashboard.sequences.create', { name: 'X', status: 'live' }, cookie);
      expect(badStatus.status).to.equal(400);
      const badId = await mutate(app, 'dashboard.sequences.setStatus', { id: 'nope', status: 'active' }, cookie);
      expect(badId.status).to.equal(400);
      const badList = await get(app, 'dashboard.sequences.list', { status: 'live' }, cookie);
      expect(badList.status).to.equal(400);
      expect(await count('SELECT COUNT(*) AS n FROM sequences WHERE account_id = ?', [accountId])).to.equal(0);
    });
  });

  describe('sequences.delete and archived sequences', () => {
    it('deletes a sequence that never had a run, refuses one with runs (409), and leaves archived ones out of the list unless asked', async () => {
      const draft = await buildSequence(accountId, 'draft');
      const used = await buildSequence(accountId, 'active');
      await enrollContact(testDb(), { accountId, sequenceId: used.id, contact: { email: 'ada@example.com' } });
      const archived = await buildSequence(accountId, 'archived');

      const listed = await get(app, 'dashboard.sequences.list', {}, cookie);
      expect(listed.body.result.data.sequences.map((s: { id: string }) => s.id)).to.deep.equal([used.id, draft.id]);
      const shown = await get(app, 'dashboard.sequences.list', { status: 'archived' }, cookie);
      expect(shown.body.result.data.sequences.map((s: { id: string }) => s.id)).to.deep.equal([archived.id]);

      const deleted = await mutate(app, 'dashboard.sequences.delete', { id: draft.id }, cookie);
      expect(deleted.status, deleted.text).to.equal(200);
      expect(deleted.body.result.data).to.deep.equal({ deleted: true });
      const refused = await mutate(app, 'dashboard.sequences.delete', { id: used.id }, cookie);
      expect(refused.status).to.equal(409);
      expect(refused.body.error.data.appCode).to.equal('sequence_has_runs');
      expect(refused.body.error.message).to.match(/archive it instead/);
      const foreign = await buildSequence(other.accountId, 'draft');
      for (const id of [foreign.id, UNKNOWN_ID]) {
        const res = await mutate(app, 'dashboard.sequences.delete', { id }, cookie);
        expect(res.status, id).to.equal(404);
      }
      const badId = await mutate(app, 'dashboard.sequences.delete', { id: 'nope' }, cookie);
      expect(badId.status).to.equal(400);
      expect(badId.body.error.data.details).to.deep.equal([{ path: 'id', message: 'must be a UUID' }]);

      const stored = await select<{ id: string }>(testDb(), 'SELECT id FROM sequences WHERE account_id IN (?, ?) ORDER BY id', [accountId, other.accountId]);
      expect(stored.map((row) => row.id).sort()).to.deep.equal([used.id, archived.id, foreign.id].sort());
    });
  });

  it('refuses every one of these procedures to an API key, with or without a session, and to no session', async () => {
    const contact = await buildContact(other.accountId, { email: 'keyed@example.com' });
    const sequence = await buildSequence(other.accountId, 'active');
    const queries: Array<[string, unknown]> = [
      ['dashboard.contacts.list', {}],
      ['dashboard.contacts.get', { id: contact.id }],
      ['dashboard.contacts.runs', { id: contact.id }],
      ['dashboard.contacts.emails', { ids: [contact.id] }],
      ['dashboard.sequences.list', {}],
      ['dashboard.sequences.get', { id: sequence.id }],
      ['dashboard.sequences.runs', { id: sequence.id }],
    ];
    const mutations: Array<[string, unknown]> = [
      ['dashboard.contacts.update', { id: contact.id, firstName: 'Keyed' }],
      ['dashboard.contacts.updateSubscriptions', { id: contact.id, emailSubscriptionStatus: 'unsubscribed' }],
      ['dashboard.contacts.addTags', { id: contact.id, tags: ['keyed'] }],
      ['dashboard.contacts.removeTags', { id: contact.id, tags: ['keyed'] }],
      ['dashboard.contacts.unenroll', { id: contact.id, sequenceId: sequence.id }],
      ['dashboard.contacts.delete', { id: contact.id }],
      ['dashboard.sequences.create', { name: 'Keyed' }],
      ['dashboard.sequences.setStatus', { id: sequence.id, status: 'archived' }],
      ['dashboard.sequences.delete', { id: sequence.id }],
    ];
    for (const [path, input] of queries) {
      const keyed = await get(app, path, input).set('x-api-key', other.key);
      expect(keyed.status, path).to.equal(401);
      expect(keyed.body.error.message).to.equal(KEY_NOT_ACCEPTED);
      expect((await get(app, path, input, cookie).set('x-api-key', other.key)).status, `${path} with both`).to.equal(401);
      expect((await get(app, path, input)).status, `${path} signed out`).to.equal(401);
    }
    for (const [path, input] of mutations) {
      const keyed = await mutate(app, path, input).set('x-api-key', other.key);
      expect(keyed.status, path).to.equal(401);
      expect((await mutate(app, path, input, cookie).set('x-api-key', other.key)).status, `${path} with both`).to.equal(401);
      expect((await mutate(app, path, input)).status, `${path} signed out`).to.equal(401);
    }
    const [row] = await select<{ first_name: string | null; tags: unknown }>(testDb(), 'SELECT first_name, tags FROM contacts WHERE id = ?', [contact.id]);
    expect(row.first_name).to.equal(null);
    expect(await count("SELECT COUNT(*) AS n FROM sequences WHERE status = 'archived' OR name = 'Keyed'")).to.equal(0);
    expect(await count('SELECT COUNT(*) AS n FROM sequences WHERE id = ?', [sequence.id]), 'not deleted').to.equal(1);
  });
});
