import type { Connection } from 'mysql2/promise';
import { idSql, seedContacts, seedRuns, type SeededContacts } from '../engine/seed';

// The million runs waiting at the cart sequence's wait_for step, each for its own contact and
// its own cart ("other keys": no activity of the benchmark matches one), seeded set-based as
// bench:engine seeds its runs (INSERT ... SELECT over bench_numbers, 50,000 rows a statement):
// the contacts, the runs at the step (running, step begun now, due at the timeout), and their
// run_waits rows as the engine writes them when the step begins (src/services/engine/run-waits.ts).

const CHUNK = 50_000;

export interface WaitingSeed {
  contacts: SeededContacts;
  runPrefix: string;
  seconds: { contacts: number; runs: number; waits: number };
}

export async function seedWaitingRuns(
  admin: Connection,
  input: { accountId: string; sequenceId: string; stepId: string; activity: string; count: number; timeoutMs: number },
): Promise<WaitingSeed> {
  let started = performance.now();
  const contacts = await seedContacts(admin, input.accountId, input.count);
  const contactSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const now = new Date();
  const runPrefix = await seedRuns(admin, {
    accountId: input.accountId,
    sequenceId: input.sequenceId,
    contacts,
    count: input.count,
    stepId: input.stepId,
    state: 'waiting',
    dueAt: new Date(now.getTime() + input.timeoutMs),
  });
  const runSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  for (let from = 0; from < input.count; from += CHUNK) {
    const to = Math.min(input.count, from + CHUNK) - 1;
    await admin.query(
      `INSERT INTO run_waits (run_id, account_id, contact_id, activity, match_values, visit, step_id, created_at)
       SELECT ${idSql(runPrefix)}, ?, ${idSql(contacts.prefix)}, ?, CONCAT('{"cartId":"other-', n, '"}'), 1, ?, ?
       FROM bench_numbers WHERE n BETWEEN ? AND ?`,
      [input.accountId, input.activity, input.stepId, now, from, to],
    );
  }
  const waitSeconds = (performance.now() - started) / 1000;
  return { contacts, runPrefix, seconds: { contacts: contactSeconds, runs: runSeconds, waits: waitSeconds } };
}

// Seeded contact n's email, as bench/engine/seed.ts writes it.
export function seededEmail(contacts: SeededContacts, n: number): string {
  return `b${n}-${contacts.prefix}@bench.test`;
}
