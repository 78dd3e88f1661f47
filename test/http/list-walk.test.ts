import { expect } from 'chai';
import { isDeepStrictEqual } from 'node:util';
import type { ContactDto, ContactFields } from '../../src/schemas/contact';
import { execute } from '../../src/db/sql/statements';
import { batchUpsertContacts, deleteContact, updateContact } from '../../src/services/contacts/contact-operations';
import { listContacts } from '../../src/services/contacts/list-contacts';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { seededRandom } from '../support/random';

// Walking the contact list while other clients insert, update and delete contacts (issue 9):
// in the default order every contact that existed when the walk began and still exists at its
// end is seen exactly once; with sort=updatedAt each walk ends and lists a contact at most once,
// and the walks resumed from each other's resumeCursor list every change. Every contact's email
// starts with `walk-`, so that q walks them too: `walk` through its own mirror rows, `walk-`
// (longer than the mirror's prefixes, with more matches than are sorted) through `walk`'s rows
// checking the whole prefix, `walk-1` (fewer matches) from the email index, sorted.

const INITIAL = 240;
const PAGE = 20;

async function seed(accountId: string): Promise<string[]> {
  const contacts: ContactFields[] = Array.from({ length: INITIAL }, (_, i) => ({ email: `walk-${i}@walk.test`, tags: ['walk'] }));
  for (let at = 0; at < contacts.length; at += 100) {
    await batchUpsertContacts(testDb(), { accountId, contacts: contacts.slice(at, at + 100) });
  }
  const rows = (await testDb().sequelize.query('SELECT id FROM contacts WHERE account_id = ?', {
    replacements: [accountId],
    type: 'SELECT',
  })) as Array<{ id: string }>;
  return rows.map((row) => row.id);
}

// Writers that run until stopped: new contacts in batches, updates of existing ones (which move
// them in the updatedAt order, and rewrite their tags), deletes of a few.
function startWriters(accountId: string, existing: string[], seed: number) {
  const random = seededRandom(seed);
  const deleted = new Set<string>();
  let running = true;
  let writes = 0;
  let fresh = 0;
  const loops = [
    async () => {
      while (running) {
        const contacts = Array.from({ length: 10 }, () => ({ email: `walk-new${(fresh += 1)}-${seed}@walk.test`, tags: ['walk'] }));
        await batchUpsertContacts(testDb(), { accountId, contacts });
        writes += 1;
      }
    },
    ...[1, 2].map(() => async () => {
      while (running) {
        const id = existing[Math.floor(random() * existing.length)];
        if (deleted.has(id)) continue;
        try {
          await updateContact(testDb(), { accountId, id, customFields: { n: writes }, tags: ['walk', `w${writes % 3}`] });
        } catch (error) {
          if (!deleted.has(id)) throw error;
        }
        writes += 1;
      }
    }),
    async () => {
      while (running && deleted.size < 15) {
        const id = existing[Math.floor(random() * existing.length)];
        if (deleted.has(id)) continue;
        deleted.add(id);
        await deleteContact(testDb(), { accountId, id });
        writes += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  ];
  const done = Promise.all(loops.map((loop) => loop()));
  return {
    deleted,
    writes: () => writes,
    async stop() {
      running = false;
      await done;
    },
  };
}

// The contacts among ids whose email starts with q (as the list compares it), all without q.
async function matchingQ(accountId: string, ids: string[], q: string | undefined): Promise<string[]> {
  if (q === undefined) return ids;
  const rows = (await testDb().sequelize.query('SELECT id, email_normalized FROM contacts WHERE account_id = ?', {
    replacements: [accountId],
    type: 'SELECT',
  })) as Array<{ id: string; email_normalized: string }>;
  const matching = new Set(rows.filter((row) => row.email_normalized.startsWith(q.toLowerCase())).map((row) => row.id));
  return ids.filter((id) => matching.has(id));
}

function countById(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('walking GET /contacts under concurrent writes', function () {
  this.timeout(60_000);

  const filters: Array<{ tag?: string; q?: string }> = [{}, { tag: 'walk' }, { q: 'walk' }, { q: 'WALK-' }, { q: 'walk-1' }, { q: 'walk-', tag: 'walk' }];
  for (const filter of filters) {
    it(`sees every contact that existed at the start and still exists exactly once, newest first ${JSON.stringify(filter)}`, async () => {
      const { accountId, key } = await buildTenant();
      const initial = await seed(accountId);
      const writers = startWriters(accountId, initial, 7);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      try {
        do {
          const res = await api(key)
            .get('/contacts')
            .query({ ...filter, limit: PAGE, ...(cursor ? { cursor } : {}) });
          expect(res.status, res.text).to.equal(200);
          seen.push(...res.body.contacts.map((c: { id: string }) => c.id));
          cursor = res.body.nextCursor;
          pages += 1;
          // Let the writers in between pages.
          await new Promise((resolve) => setTimeout(resolve, 10));
        } while (cursor);
      } finally {
        await writers.stop();
      }

      const counts = countById(seen);
      const survivors = await matchingQ(accountId, initial.filter((id) => !writers.deleted.has(id)), filter.q);
      expect(survivors.length, 'survivors that match').to.be.greaterThan(filter.q === 'walk-1' ? 100 : 200);
      expect(writers.writes(), 'writes during the walk').to.be.greaterThan(pages);
      expect(survivors.filter((id) => counts.get(id) !== 1), 'survivors not seen exactly once').to.deep.equal([]);
      expect([...counts.values()].filter((n) => n > 1), 'nothing twice').to.deep.equal([]);
    });
  }

  // A sync client: walks sort=updatedAt until nextCursor is null, keeps the resumeCursor, and
  // walks again from it, while the writers run; then, the writers stopped and the list's clock
  // moved past the settle window, until a walk lists nothing. Its copy must then be the account.
  for (const filter of [{}, { tag: 'walk' }, { q: 'walk' }, { q: 'walk-' }] as Array<{ q?: string; tag?: string }>) {
    it(`with sort=updatedAt each walk ends and lists a contact at most once, and the walks resumed miss no change ${JSON.stringify(filter)}`, async () => {
      const { accountId } = await buildTenant();
      const initial = await seed(accountId);
      // Seeded a while ago: the first walk lists them (the writers' changes come in later walks).
      const past = new Date(Date.now() - 3_600_000);
      for (const table of ['contacts', 'contact_tags', 'contact_email_prefixes']) {
        await execute(testDb(), `UPDATE ${table} SET created_at = ?, updated_at = ? WHERE account_id = ?`, [past, past, accountId]);
      }
      // The horizon trails the clock by SETTLE: longer than a write here takes from its timestamp
      // to its COMMIT, short enough that the walks meet the writes.
      const SETTLE = 1_000;
      let ahead = 0;
      const clock = { now: () => new Date(Date.now() + ahead) };
      const copy = new Map<string, ContactDto>();
      const walks: string[][] = [];
      let pages = 0;
      const walk = async (from: string | undefined): Promise<string> => {
        const listed: string[] = [];
        let cursor = from;
        for (;;) {
          const page = await listContacts(testDb(), { accountId, ...filter, sort: 'updatedAt', limit: PAGE, cursor }, { settleMs: SETTLE, ...clock });
          pages += 1;
          expect(pages, 'pages, all walks').to.be.below(2_000);
          for (const contact of page.items) copy.set(contact.id, contact);
          listed.push(...page.items.map((c) => c.id));
          if (page.nextCursor === null) {
            walks.push(listed);
            expect(page.sync?.resumeCursor).to.be.a('string');
            return page.sync!.resumeCursor!;
          }
          expect(page.sync?.resumeCursor).to.equal(null);
          cursor = page.nextCursor;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };

      const writers = startWriters(accountId, initial, 11);
      let resume: string | undefined;
      try {
        // Walks while the writers write, as a client polling the feed would: the next walk once
        // more has been written, until some walks have met the writes.
        while (walks.filter((listed) => listed.length > 0).length < 4 || writers.writes() < 300) {
          const written = writers.writes();
          resume = await walk(resume);
          while (writers.writes() < written + 20) await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await writers.stop();
      }
      ahead = SETTLE + 1;
      let caughtUp = false;
      for (let more = 0; more < 3 && !caughtUp; more += 1) {
        resume = await walk(resume);
        caughtUp = walks[walks.length - 1].length === 0;
      }
      expect(caughtUp, 'a walk after the writers stopped lists nothing').to.equal(true);

      for (const [n, listed] of walks.entries()) {
        expect([...countById(listed)].filter(([, count]) => count > 1), `walk ${n}: listed twice`).to.deep.equal([]);
      }
      // The account as it is now: every contact the client should have, in its latest state.
      const now = new Map<string, ContactDto>();
      let cursor: string | undefined;
      do {
        const page = await listContacts(testDb(), { accountId, limit: 200, cursor });
        for (const contact of page.items) now.set(contact.id, contact);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const stale = [...now.values()].filter((contact) => !isDeepStrictEqual(copy.get(contact.id), contact));
      expect(stale.map((contact) => contact.id), 'contacts the copy lacks, or has in an older state').to.deep.equal([]);
      // What the copy has beyond the account are the deleted contacts (a list shows no deletes).
      expect([...copy.keys()].filter((id) => !now.has(id) && !writers.deleted.has(id))).to.deep.equal([]);
      expect(now.size, 'contacts created meanwhile').to.be.greaterThan(INITIAL);
      // The writers did meet the walks: contacts changed during one walk came in a later one.
      const listedInWalks = countById(walks.flatMap((listed) => listed));
      expect([...listedInWalks.values()].filter((count) => count > 1).length, 'contacts listed by more than one walk').to.be.greaterThan(10);
    });
  }
});
