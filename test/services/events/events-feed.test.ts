import { expect } from 'chai';
import { batchUpsertContacts, createContact, updateContact } from '../../../src/services/contacts/contact-operations';
import { enrollContact } from '../../../src/services/sequences/enroll-contact';
import { listEvents } from '../../../src/services/events/list-events';
import type { EventDto } from '../../../src/schemas/event';
import { api, caller } from '../../support/app';
import { openDatabase } from '../../../src/db/database';
import { rebindModelsToTestDb, TEST_DATABASE_URL, testDb } from '../../support/db';
import { buildSequence, buildTenant } from '../../support/factories';
import { trpcRejection } from '../../support/trpc';
import { allEvents } from './support';

// GET /api/v1/events and events.list: paging, the cursor, the type filter, 400s, accounts.

const db = () => testDb();

async function contacts(accountId: string, count: number, prefix = 'c') {
  for (let i = 0; i < count; i += 1) await createContact(db(), { accountId, email: `${prefix}-${i}@x.io` });
}

const emailsOf = (events: EventDto[]) => events.map((e) => (e.data as { contact: { email: string } }).contact.email);

describe('events feed', () => {
  it('pages through the events in order, and nextCursor on the last page resumes with new events', async () => {
    const { accountId, key } = await buildTenant();
    await contacts(accountId, 5);

    const first = await api(key).get('/events?limit=2');
    expect(first.status).to.equal(200);
    expect(emailsOf(first.body.events)).to.deep.equal(['c-0@x.io', 'c-1@x.io']);
    const second = await api(key).get(`/events?limit=2&after=${first.body.nextCursor}`);
    expect(emailsOf(second.body.events)).to.deep.equal(['c-2@x.io', 'c-3@x.io']);
    const last = await api(key).get(`/events?limit=2&after=${second.body.nextCursor}`);
    expect(emailsOf(last.body.events)).to.deep.equal(['c-4@x.io']);
    expect(last.body.nextCursor).to.be.a('string');

    const empty = await api(key).get(`/events?after=${last.body.nextCursor}`);
    expect(empty.body).to.deep.equal({ events: [], nextCursor: last.body.nextCursor });

    await contacts(accountId, 1, 'later');
    const resumed = await api(key).get(`/events?after=${empty.body.nextCursor}`);
    expect(emailsOf(resumed.body.events)).to.deep.equal(['later-0@x.io']);
  });

  it('answers the event objects the payload schemas describe, with a default page of 50', async () => {
    const { accountId, key } = await buildTenant();
    await batchUpsertContacts(db(), {
      accountId,
      contacts: Array.from({ length: 60 }, (_, i) => ({ email: `b-${String(i).padStart(2, '0')}@x.io` })),
    });
    const res = await api(key).get('/events');
    expect(res.status).to.equal(200);
    expect(res.body.events).to.have.length(50);
    expect(res.body.events[0]).to.have.all.keys('id', 'type', 'createdAt', 'accountId', 'data');
    expect(res.body.events[0]).to.deep.equal((await allEvents(accountId))[0]);
  });

  it('filters by type, and the filtered cursor resumes after the last event it returned', async () => {
    const { accountId, key } = await buildTenant();
    await contacts(accountId, 3);
    const [first] = (await allEvents(accountId)) as Array<{ data: { contact: { id: string } } }>;
    await updateContact(db(), { accountId, id: first!.data.contact.id, firstName: 'Changed' });
    await contacts(accountId, 1, 'after');

    const updated = await api(key).get('/events?type=contact.updated');
    expect(updated.body.events.map((e: EventDto) => e.type)).to.deep.equal(['contact.updated']);
    const createdAfter = await api(key).get(`/events?type=contact.created&after=${updated.body.nextCursor}`);
    expect(emailsOf(createdAfter.body.events)).to.deep.equal(['after-0@x.io']);
  });

  it('answers 400 for a cursor it did not make, an unknown type, and a limit out of range, with details', async () => {
    const { key } = await buildTenant();
    for (const query of [
      'after=nonsense',
      'after=' + Buffer.from('ev1:-1').toString('base64url'),
      'after=' + Buffer.from('ev1:99999999999999999999').toString('base64url'),
      'type=contact.exploded',
      'limit=0',
      'limit=201',
      'limit=ten',
      'limit=1.5',
    ]) {
      const res = await api(key).get(`/events?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.error, query).to.be.a('string');
    }
  });

  it('answers 401 without a key', async () => {
    const res = await api().get('/events');
    expect(res.status).to.equal(401);
  });

  it('shows an account only its own events, whatever the cursor', async () => {
    const mine = await buildTenant();
    const theirs = await buildTenant();
    await contacts(theirs.accountId, 3, 'theirs');
    await contacts(mine.accountId, 1, 'mine');
    const res = await api(mine.key).get('/events');
    expect(emailsOf(res.body.events)).to.deep.equal(['mine-0@x.io']);
    expect(res.body.events[0].accountId).to.equal(mine.accountId);
  });

  it('is the same procedure over tRPC, with a BAD_REQUEST for a bad cursor', async () => {
    const { accountId, key } = await buildTenant();
    const sequence = await buildSequence(accountId, 'active');
    await enrollContact(db(), { accountId, sequenceId: sequence.id, contact: { email: 'r@x.io' } });
    const page = await caller(key).events.list({ type: 'run.created', limit: 10 });
    expect(page.events.map((e) => e.type)).to.deep.equal(['run.created']);
    const error = await trpcRejection(caller(key).events.list({ after: 'nope' }));
    expect(error.code).to.equal('BAD_REQUEST');
  });

  describe('under concurrent writers', () => {
    // Several clients write (batches, single upserts, triggers) while a reader polls with its
    // cursor. Whatever interleaving the database allowed, the reader must have seen every event
    // exactly once and in the feed's final order: an event that committed after the reader
    // passed its position would be missing here.
    it('lets a polling reader see every event exactly once, in order, none skipped', async function () {
      this.timeout(20_000);
      const { accountId } = await buildTenant();
      const sequence = await buildSequence(accountId, 'active');
      const WRITERS = 8;
      const ROUNDS = 10;
      let writing = true;

      const writer = async (w: number) => {
        for (let r = 0; r < ROUNDS; r += 1) {
          if (r % 3 === 0) {
            await batchUpsertContacts(db(), {
              accountId,
              contacts: Array.from({ length: 5 }, (_, i) => ({ email: `w${w}-r${r}-${i}@x.io` })),
            });
          } else if (r % 3 === 1) {
            await enrollContact(db(), { accountId, sequenceId: sequence.id, contact: { email: `w${w}-t${r}@x.io` } });
          } else {
            await batchUpsertContacts(db(), { accountId, contacts: [{ email: `w${w}-r0-0@x.io`, firstName: `R${r}` }] });
          }
        }
      };

      // On MariaDB the reader has connections of its own, as an integrator's poller would, so
      // that it polls often and is not queued behind the writers for the pool.
      const readerDb = db().dialect === 'sqlite' ? db() : openDatabase(TEST_DATABASE_URL);
      const seen: string[] = [];
      const reader = async () => {
        let after: string | undefined;
        for (;;) {
          const done = !writing;
          const page = await listEvents(readerDb, { accountId, after, limit: 7 });
          seen.push(...page.events.map((e) => e.id));
          after = page.nextCursor;
          if (done && page.events.length === 0) return;
          if (page.events.length === 0) await new Promise((resolve) => setImmediate(resolve));
        }
      };

      try {
        const reading = reader();
        await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
        writing = false;
        await reading;
      } finally {
        writing = false;
        if (readerDb !== db()) await readerDb.close();
        rebindModelsToTestDb();
      }

      const final = (await allEvents(accountId)).map((e) => e.id);
      expect(final.length).to.be.greaterThan(WRITERS * ROUNDS);
      expect(new Set(seen).size).to.equal(seen.length);
      expect(seen).to.deep.equal(final);
    });
  });
});
