import { randomBytes } from 'node:crypto';
import type { Connection } from 'mysql2/promise';

// Rows for the engine benchmark, written set-based in SQL (INSERT ... SELECT over a numbers
// table): seeding a million runs through the API would take longer than the measurement.
// Ids are uuid-shaped and ascending within a seed (a random prefix, then the row's number), so
// that the primary keys fill pages in order as uuidv7 ids do in production.

const CHUNK = 50_000;
const MAX_NUMBERS = 1_000_000;

// bench_numbers(n): 0 .. 999,999, made once per database (ten digits joined six times).
export async function ensureNumbers(admin: Connection): Promise<void> {
  await admin.query('CREATE TABLE IF NOT EXISTS bench_numbers (n INT UNSIGNED NOT NULL PRIMARY KEY) ENGINE=InnoDB');
  const [rows] = await admin.query('SELECT COUNT(*) AS c FROM bench_numbers');
  if (Number((rows as Array<{ c: number }>)[0].c) === MAX_NUMBERS) return;
  await admin.query('DELETE FROM bench_numbers');
  const digits = '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
  await admin.query(
    `INSERT INTO bench_numbers (n)
     SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 100000 * g.d
     FROM ${digits} a CROSS JOIN ${digits} b CROSS JOIN ${digits} c CROSS JOIN ${digits} e CROSS JOIN ${digits} f CROSS JOIN ${digits} g`,
  );
}

// The id of row n of a seed: PREFIX-KIND-7000-8000-<n as 12 hex digits>.
export function idSql(prefix: string, column = 'n'): string {
  return `CONCAT('${prefix}', '-7000-8000-', LPAD(HEX(${column}), 12, '0'))`;
}

export function idOf(prefix: string, n: number): string {
  return `${prefix}-7000-8000-${n.toString(16).toUpperCase().padStart(12, '0')}`;
}

function newPrefix(kind: string): string {
  return `${randomBytes(4).toString('hex')}-${kind}`;
}

async function inChunks(count: number, insert: (from: number, to: number) => Promise<void>): Promise<void> {
  if (count > MAX_NUMBERS) throw new Error(`at most ${MAX_NUMBERS} rows per seed`);
  for (let from = 0; from < count; from += CHUNK) await insert(from, Math.min(count, from + CHUNK) - 1);
}

export interface SeededContacts {
  prefix: string;
  count: number;
}

// `count` contacts of the account, no tags, no fields.
export async function seedContacts(admin: Connection, accountId: string, count: number): Promise<SeededContacts> {
  const prefix = newPrefix('0c0c');
  const now = new Date();
  await inChunks(count, async (from, to) => {
    await admin.query(
      `INSERT INTO contacts (id, account_id, email, email_normalized, tags, custom_fields, created_at, updated_at)
       SELECT ${idSql(prefix)}, ?, CONCAT('b', n, '-', ?, '@bench.test'), CONCAT('b', n, '-', ?, '@bench.test'), '[]', '{}', ?, ?
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [accountId, prefix, prefix, now, now, from, to],
    );
  });
  return { prefix, count };
}

export interface RunSeed {
  accountId: string;
  sequenceId: string;
  contacts: SeededContacts;
  // Run n belongs to contact (n + contactOffset) % contacts.count: one run per contact and
  // sequence as long as count <= contacts.count (sequence_runs_one_active).
  count: number;
  contactOffset?: number;
  stepId: string;
  // pending at a step not yet begun (an enrollment's state), or running in a wait.
  state: 'due' | 'waiting';
  // Run n is due at dueAt + n * stepMicros microseconds; null: nothing due (set aside).
  dueAt: Date | null;
  stepMicros?: number;
}

// Runs at version 1 of their sequence, visit 1 of `stepId`. Answers their id prefix.
export async function seedRuns(admin: Connection, seed: RunSeed): Promise<string> {
  const prefix = newPrefix('0a0a');
  const now = new Date();
  const waiting = seed.state === 'waiting';
  await inChunks(seed.count, async (from, to) => {
    await admin.query(
      `INSERT INTO sequence_runs (id, account_id, sequence_id, contact_id, status, started_at, created_at, updated_at,
                                  version, current_step_id, visit, attempt, step_started_at, due_at)
       SELECT ${idSql(prefix)}, ?, ?, ${idSql(seed.contacts.prefix, `MOD(n + ${Math.floor(seed.contactOffset ?? 0)}, ${seed.contacts.count})`)},
              ?, ?, ?, ?, 1, ?, 1, ?, ?, DATE_ADD(?, INTERVAL FLOOR(n * ?) MICROSECOND)
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [
        seed.accountId,
        seed.sequenceId,
        waiting ? 'running' : 'pending',
        now,
        now,
        now,
        seed.stepId,
        waiting ? 1 : 0,
        waiting ? now : null,
        seed.dueAt,
        seed.stepMicros ?? 0,
        from,
        to,
      ],
    );
  });
  return prefix;
}
