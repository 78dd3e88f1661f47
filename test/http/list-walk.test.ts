import { expect } from 'chai';
import type { ContactFields } from '../../src/schemas/contact';
import { batchUpsertContacts, deleteContact, updateContact } from '../../src/services/contacts/contact-operations';
import { listContacts } from '../../src/services/contacts/list-contacts';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { seededRandom } from '../support/random';

// Walking the contact list while other clients insert, update and delete contacts (issue 9):
// in the default order every contact that existed when the walk began and still exists at its
// end is seen exactly once; with sort=updatedAt, at least once. Every contact's email starts with
// `walk-`, so that q walks them too: `walk` through its own mirror rows, `walk-` (longer than
// the mirror's prefixes, with more matches than are sorted) through `walk`'s rows checking the
// whole prefix, `walk-1` (fewer matches) from the email index, sorted.

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

  for (const filter of [{}, { q: 'walk' }, { q: 'walk-' }] as Array<{ q?: string }>) {
    it(`with sort=updatedAt sees every contact that existed at the start and still exists at least once ${JSON.stringify(filter)}`, async () => {
      const { accountId } = await buildTenant();
      const initial = await seed(accountId);
      const writers = startWriters(accountId, initial, 11);
      const seen: string[] = [];
      let cursor: string | undefined;
      let repeats = 0;
      try {
        for (;;) {
          // A short settle window keeps the test quick; the guarantee needs it only to exceed the
          // time between a write's timestamp and its COMMIT.
          const page = await listContacts(testDb(), { accountId, ...filter, sort: 'updatedAt', limit: PAGE, cursor }, { settleMs: 300 });
          seen.push(...page.items.map((c) => c.id));
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
          // The writers stop after a while; the walk then runs out.
          if (seen.length > INITIAL * 2 && writers.writes() > 0) await writers.stop();
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await writers.stop();
      }
      const counts = countById(seen);
      repeats = [...counts.values()].filter((n) => n > 1).length;
      const survivors = initial.filter((id) => !writers.deleted.has(id));
      expect(survivors.filter((id) => !counts.has(id)), 'survivors never seen').to.deep.equal([]);
      expect(repeats, 'contacts updated during the walk come again').to.be.greaterThan(0);
    });
  }
});
