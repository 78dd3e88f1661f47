import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database';
import { parseJson, toDate } from '../../db/sql/rows';
import type { Transaction } from 'sequelize';
import { execute, forUpdate, select, skipLocked } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { ExitRule, SendingWindow } from '../../schemas/sequence-definition';
import type { RunDto } from '../../schemas/sequence';
import type { RunStatus, SequenceStatus } from '../../schemas/statuses';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/contact-row';

// sequence_runs as the engine's queue (db/migrations/20261208000000-create-sequence-engine.js):
// the claim, the read of what was claimed, and the hand-back. The loop (engine.ts) and the
// recording of outcomes (record-batch.ts) hold no claim SQL of their own.
//
// The claim reads the sequence_runs_due index in due order and stops at `limit`: its cost is
// the batch's, whatever the number of runs waiting (bench/engine.ts measures it at a million).
// It names no account and joins nothing, so on a table sharded by account each shard answers
// it alone (docs/architecture.md "Outgrowing one database"). The claim's lease is the run's
// next due time: a worker that dies holding it leaves a run that is due again when the lease
// ends, and another worker takes it; nothing else ever needs to find stuck runs.
// - MySQL/MariaDB: SELECT ... FOR UPDATE SKIP LOCKED, then one UPDATE; concurrent workers
//   pass over each other's rows instead of waiting for them.
// - SQLite: one writer at a time; the claim's SELECT and UPDATE are one transaction, and a second
//   process on the same file cannot write between them (its write waits, or fails and retries).

export interface Claim {
  token: string;
  // Each claimed run and the time it was due (for the lag histogram).
  runs: Array<{ id: string; dueAt: Date }>;
}

export async function claimDueRuns(db: Database, now: Date, options: { limit: number; leaseMs: number }): Promise<Claim> {
  const token = randomUUID();
  const leaseEnd = new Date(now.getTime() + options.leaseMs);
  const limit = Math.max(1, Math.floor(options.limit));
  return withTransaction(db, async (transaction) => {
    const due = await select<{ id: string; due_at: unknown }>(
      db,
      `SELECT id, due_at FROM sequence_runs WHERE due_at <= ? ORDER BY due_at LIMIT ${limit}${skipLocked(db)}`,
      [now],
      transaction,
    );
    if (due.length === 0) return { token, runs: [] };
    await execute(db, 'UPDATE sequence_runs SET due_at = ?, claim_token = ? WHERE id IN (?)', [leaseEnd, token, due.map((row) => row.id)], transaction);
    return { token, runs: due.map((row) => ({ id: row.id, dueAt: toDate(row.due_at) })) };
  });
}

// The text of the claim's SELECT, for the benchmark's EXPLAIN.
export const CLAIM_SELECT = 'SELECT id, due_at FROM sequence_runs WHERE due_at <= ? ORDER BY due_at LIMIT ?';

// The earliest time anything is due, for the loop to sleep until: the index's first non-null
// entry. No WHERE: MIN skips NULLs by itself, and with `due_at IS NOT NULL` written out MariaDB
// plans a range over every waiting run (456 ms at a million, bench/results/engine.md) instead
// of one index lookup.
export async function nextDueAt(db: Database): Promise<Date | null> {
  const [row] = await select<{ due_at: unknown }>(db, 'SELECT MIN(due_at) AS due_at FROM sequence_runs', []);
  return row?.due_at ? toDate(row.due_at) : null;
}

export interface ClaimedRun {
  id: string;
  token: string;
  accountId: string;
  sequenceId: string;
  contactId: string;
  status: RunStatus;
  version: number;
  currentStepId: string;
  visit: number;
  attempt: number;
  stepStartedAt: Date | null;
  startedAt: Date;
  createdAt: Date;
  dueAt: Date;
  sequenceStatus: SequenceStatus;
  exitWhen: ExitRule[];
  sendingWindow: SendingWindow | null;
  contact: ContactRow;
}

// The claimed runs with their sequence's rules and their contact, in one statement (all three
// rows belong to one account: a join a shard answers alone). A run whose claim was taken back
// meanwhile (unenroll, pause, a move) is not among them.
export async function loadClaimedRuns(db: Database, claim: Claim): Promise<ClaimedRun[]> {
  if (claim.runs.length === 0) return [];
  const dueAt = new Map(claim.runs.map((run) => [run.id, run.dueAt]));
  const rows = await select<
    {
      run_id: string;
      sequence_id: string;
      contact_id: string;
      run_status: RunStatus;
      version: number | string;
      current_step_id: string;
      visit: number | string;
      attempt: number | string;
      step_started_at: unknown;
      started_at: unknown;
      run_created_at: unknown;
      sequence_status: SequenceStatus;
      exit_when: string | null;
      sending_window: string | null;
    } & ContactRow
  >(
    db,
    `SELECT r.id AS run_id, r.sequence_id, r.contact_id, r.status AS run_status, r.version, r.current_step_id, r.visit, r.attempt,
            r.step_started_at, r.started_at, r.created_at AS run_created_at,
            s.status AS sequence_status, s.exit_when, s.sending_window,
            ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')}
     FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id JOIN contacts c ON c.id = r.contact_id
     WHERE r.id IN (?) AND r.claim_token = ? AND r.current_step_id IS NOT NULL`,
    [[...dueAt.keys()], claim.token],
  );
  return rows.map((row) => ({
    id: row.run_id,
    token: claim.token,
    accountId: row.account_id,
    sequenceId: row.sequence_id,
    contactId: row.contact_id,
    status: row.run_status,
    version: Number(row.version),
    currentStepId: row.current_step_id,
    visit: Number(row.visit),
    attempt: Number(row.attempt),
    stepStartedAt: row.step_started_at ? toDate(row.step_started_at) : null,
    startedAt: toDate(row.started_at),
    createdAt: toDate(row.run_created_at),
    dueAt: dueAt.get(row.run_id)!,
    sequenceStatus: row.sequence_status,
    exitWhen: row.exit_when ? parseJson<ExitRule[]>(row.exit_when) : [],
    sendingWindow: row.sending_window ? parseJson<SendingWindow>(row.sending_window) : null,
    contact: row,
  }));
}

// A stopping engine gives back what it claimed and did not start: due again at once, for
// another worker to take now rather than when the lease ends.
export async function releaseRuns(db: Database, runIds: readonly string[], token: string, now: Date): Promise<void> {
  if (runIds.length === 0) return;
  await execute(db, 'UPDATE sequence_runs SET due_at = ?, claim_token = NULL WHERE id IN (?) AND claim_token = ?', [now, runIds, token]);
}

// Of the claimed runs, those this claim still holds, locked for the rest of the transaction:
// every write of a claimed run goes through here first. With each, its status as locked (what
// a write then moves it from, for the status counters).
export async function lockClaimedRuns(db: Database, runIds: readonly string[], token: string, transaction: Transaction): Promise<Map<string, RunStatus>> {
  const rows = await select<{ id: string; status: RunStatus }>(
    db,
    `SELECT id, status FROM sequence_runs WHERE id IN (?) AND claim_token = ?${forUpdate(db)}`,
    [[...new Set(runIds)], token],
    transaction,
  );
  return new Map(rows.map((row) => [row.id, row.status]));
}

// A claimed run as the API and the events show it, in the state given.
export function claimedRunDto(
  run: ClaimedRun,
  state: { status: RunStatus; currentStepId: string | null; completedAt: Date | null; reason: string | null },
): RunDto {
  return {
    id: run.id,
    status: state.status,
    startedAt: run.startedAt.toISOString(),
    completedAt: state.completedAt ? state.completedAt.toISOString() : null,
    createdAt: run.createdAt.toISOString(),
    version: run.version,
    currentStepId: state.currentStepId,
    reason: state.reason,
  };
}

// The same, with its sequence and contact: the `run` of an event or a webhook step's body.
export function claimedEventRun(run: ClaimedRun, state: Parameters<typeof claimedRunDto>[1]) {
  return { ...claimedRunDto(run, state), sequenceId: run.sequenceId, contactId: run.contactId };
}

// Items grouped by their account, accounts in one order: two workers then take the accounts'
// locks (contacts, event counters) in the same order.
export function byAccount<T extends { accountId: string }>(items: readonly T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>();
  for (const item of [...items].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0))) {
    const group = grouped.get(item.accountId);
    if (group) group.push(item);
    else grouped.set(item.accountId, [item]);
  }
  return grouped;
}
