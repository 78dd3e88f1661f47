import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../support/app';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import { countLockFailures } from '../support/lock-failures';
import { seededRandom } from '../support/random';

// Write contention (issue 7): 16 batches of 100 overlapping emails at once, 20 rounds in a
// row. Every batch must answer 201 (no 500, no 503: the batches take their locks in one order,
// so they queue instead of deadlocking), and afterwards each contact is exactly what its last
// writer left, merged with what every earlier writer added. MariaDB is where this bites;
// on SQLite the transactions queue.

const ROUNDS = 20;
const PARALLEL = 16;
const BATCH_SIZE = 100;
const POOL_SIZE = 400;

interface StoredRow {
  email: string;
  email_normalized: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  tags: unknown;
  custom_fields: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

// The same address in the case a batch sends it: one email, several spellings.
function spelled(email: string, batch: number): string {
  if (batch % 3 === 1) return email.toUpperCase();
  if (batch % 3 === 2) return email[0].toUpperCase() + email.slice(1);
  return email;
}

describe('Contacts REST API under write contention', function () {
  this.timeout(180_000);

  it(`answers 201 to ${ROUNDS} rounds of ${PARALLEL} parallel batches of ${BATCH_SIZE} overlapping emails, and stores each contact exactly`, async () => {
    const { key, accountId } = await buildTenant();
    const random = seededRandom(7);
    const pool = Array.from({ length: POOL_SIZE }, (_, i) => `writer-${String(i).padStart(3, '0')}@example.com`);

    // What each email must hold at the end: the writers of its last round (one of them wrote
    // last), the round each batch last touched it (customFields merge one key per batch), and
    // the spellings of the round that created it (stored as first given).
    const lastRoundWriters = new Map<string, { round: number; writers: Set<string> }>();
    const batchKeys = new Map<string, Record<string, number>>();
    const firstSpellings = new Map<string, { round: number; spellings: Set<string> }>();
    const failures: string[] = [];
    let inserted = 0;
    let items = 0;

    const locks = await countLockFailures(async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const batches = Array.from({ length: PARALLEL }, () => shuffled(pool, random).slice(0, BATCH_SIZE));
      const responses: Response[] = await Promise.all(
        batches.map((emails, batch) => {
          const writer = `r${round}b${batch}`;
          const contacts = emails.map((email) => ({
            email: spelled(email, batch),
            firstName: writer,
            lastName: writer,
            phone: `+44 ${round} ${batch}`,
            tags: [writer],
            customFields: { writer, [`b${batch}`]: round },
          }));
          return api(key).post('/contacts/batch').send({ contacts });
        }),
      );

      responses.forEach((res, batch) => {
        if (res.status !== 201) failures.push(`round ${round} batch ${batch}: ${res.status} ${res.text}`);
        else {
          expect(res.body.summary.total).to.equal(BATCH_SIZE);
          expect(res.body.summary.inserted + res.body.summary.updated).to.equal(BATCH_SIZE);
          inserted += res.body.summary.inserted;
          items += res.body.summary.total;
        }
      });
      batches.forEach((emails, batch) => {
        for (const email of emails) {
          const last = lastRoundWriters.get(email);
          if (!last || last.round < round) lastRoundWriters.set(email, { round, writers: new Set([`r${round}b${batch}`]) });
          else last.writers.add(`r${round}b${batch}`);
          batchKeys.set(email, { ...batchKeys.get(email), [`b${batch}`]: round });
          const first = firstSpellings.get(email) ?? { round, spellings: new Set<string>() };
          if (first.round === round) first.spellings.add(spelled(email, batch));
          firstSpellings.set(email, first);
        }
      });
    }
    });

    expect(failures, failures.slice(0, 5).join('\n')).to.deep.equal([]);
    // Not one deadlock, not even one that a retry hid: the batches queued on their locks.
    expect(locks, 'statements refused for a lock').to.include({ deadlocks: 0, lockWaitTimeouts: 0 });
    expect(items).to.equal(ROUNDS * PARALLEL * BATCH_SIZE);
    // Each email was inserted by exactly one batch, however many raced for it.
    expect(inserted).to.equal(lastRoundWriters.size);

    const rows = (await testDb().sequelize.query(
      `SELECT email, email_normalized, first_name, last_name, phone, tags, custom_fields, created_at, updated_at
         FROM contacts WHERE account_id = ?`,
      { replacements: [accountId], type: 'SELECT' },
    )) as StoredRow[];
    expect(rows).to.have.length(lastRoundWriters.size);
    for (const row of rows) {
      const email = row.email_normalized;
      const last = lastRoundWriters.get(email);
      expect(last, email).to.not.equal(undefined);
      const customFields = json(row.custom_fields) as Record<string, unknown>;
      const writer = customFields.writer as string;
      // One writer's item, whole: every field it sent, none mixed in from another batch.
      expect([...last!.writers], email).to.include(writer);
      expect({ first: row.first_name, last: row.last_name, tags: json(row.tags) }, email).to.deep.equal({
        first: writer,
        last: writer,
        tags: [writer],
      });
      const [round, batch] = writer.slice(1).split('b');
      expect(row.phone, email).to.equal(`+44 ${round} ${batch}`);
      // Deep merge of every batch that ever named the email, each with its latest round.
      expect(customFields, email).to.deep.equal({ writer, ...batchKeys.get(email) });
      expect([...firstSpellings.get(email)!.spellings], email).to.include(row.email);
    }
  });
});
