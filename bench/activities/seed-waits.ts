import type { Connection } from 'mysql2/promise';
import { randomBytes } from 'node:crypto';

// The million runs waiting at the cart sequence's wait_for step, each for its own contact and
// its own cart ("other keys": no activity of the benchmark matches one), seeded set-based as
// bench:engine seeds its runs (INSERT ... SELECT over bench_numbers, 50,000 rows a statement):
// the contacts, the runs at the step (running, step begun now, due at the timeout), and their
// run_waits rows as the engine writes them when the step begins (src/services/engine/run-waits.ts).

const CHUNK = 50_000;

// Ids as bench/engine/seed.ts makes them (uuid-shaped, ascending within a seed) but in lower
// case: the API names a contact by id and lowercases it (src/services/ids.ts, normalizeId).
export function idSql(prefix: string, column = 'n'): string {
  return `CONCAT('${prefix}', '-7000-8000-', LOWER(LPAD(HEX(${column}), 12, '0')))`;
}

export function idOf(prefix: string, n: number): string {
  return `${prefix}-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

export interface SeededContacts {
  prefix: string;
  count: number;
}

export interface WaitingSeed {
  contacts: SeededContacts;
  runPrefix: string;
  seconds: { contacts: number; runs: number; waits: number };
}

async function inChunks(what: string, count: number, insert: (from: number, to: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let from = 0; from < count; from += CHUNK) {
    await insert(from, Math.min(count, from + CHUNK) - 1);
    const done = Math.min(count, from + CHUNK);
    if (done % 250_000 === 0 || done === count) process.stderr.write(`bench: seed: ${what} ${done} of ${count}, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  return (performance.now() - started) / 1000;
}

export async function seedWaitingRuns(
  admin: Connection,
  input: { accountId: string; sequenceId: string; stepId: string; activity: string; count: number; timeoutMs: number },
): Promise<WaitingSeed> {
  const tag = randomBytes(4).toString('hex');
  const contacts = { prefix: `${tag}-0c0c`, count: input.count };
  const runPrefix = `${tag}-0a0a`;
  const now = new Date();
  const dueAt = new Date(now.getTime() + input.timeoutMs);
  const contactSeconds = await inChunks('contacts', input.count, (from, to) =>
    admin.query(
      `INSERT INTO contacts (id, account_id, email, email_normalized, tags, custom_fields, created_at, updated_at)
       SELECT ${idSql(contacts.prefix)}, ?, CONCAT('b', n, '-', ?, '@bench.test'), CONCAT('b', n, '-', ?, '@bench.test'), '[]', '{}', ?, ?
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [input.accountId, contacts.prefix, contacts.prefix, now, now, from, to],
    ),
  );
  const runSeconds = await inChunks('sequence_runs', input.count, (from, to) =>
    admin.query(
      `INSERT INTO sequence_runs (id, account_id, sequence_id, contact_id, status, started_at, created_at, updated_at,
                                  version, current_step_id, visit, attempt, step_started_at, due_at)
       SELECT ${idSql(runPrefix)}, ?, ?, ${idSql(contacts.prefix)}, 'running', ?, ?, ?, 1, ?, 1, 1, ?, ?
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [input.accountId, input.sequenceId, now, now, now, input.stepId, now, dueAt, from, to],
    ),
  );
  const waitSeconds = await inChunks('run_waits', input.count, (from, to) =>
    admin.query(
      `INSERT INTO run_waits (run_id, account_id, contact_id, activity, match_values, visit, step_id, created_at)
       SELECT ${idSql(runPrefix)}, ?, ${idSql(contacts.prefix)}, ?, CONCAT('{"cartId":"other-', n, '"}'), 1, ?, ?
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [input.accountId, input.activity, input.stepId, now, from, to],
    ),
  );
  return { contacts, runPrefix, seconds: { contacts: contactSeconds, runs: runSeconds, waits: waitSeconds } };
}

// Seeded contact n's email.
export function seededEmail(contacts: SeededContacts, n: number): string {
  return `b${n}-${contacts.prefix}@bench.test`;
}
