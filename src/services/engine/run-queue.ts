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
import { dueAccounts } from './due-accounts';
import { roundRobin, shareOf, type DueRun } from './claim-shares';
import type { ClaimedRun } from './claimed-run';
import { readSnapshot, type WaitedActivity } from '../activities/activity-snapshot';

// sequence_runs as the engine's queue (db/migrations/20261208000000-create-sequence-engine.js):
// the claim, the read of what was claimed, and the hand-back. The loop (engine.ts) and the
// recording of outcomes (record-batch.ts) hold no claim SQL of their own.
//
// The claim reads the sequence_runs_due index in due order and stops at `limit`: its cost is
// the batch's, whatever the number of runs waiting (bench/engine.ts measures it at a million).
// The claim's lease is lease_until, a column in no index (so a claim rewrites no index entry):
// a worker that dies holding it leaves a run that is claimable again when the lease ends, and
// another worker takes it; nothing else ever needs to find stuck runs. The claim passes over
// runs whose lease is live (at most the batches in flight, at the head of the due index).
// - MySQL/MariaDB: SELECT ... FOR UPDATE SKIP LOCKED, then one UPDATE; concurrent workers
//   pass over each other's rows instead of waiting for them.
// - SQLite: one writer at a time; the claim's SELECT and UPDATE are one transaction, and a second
//   process on the same file cannot write between them (its write waits, or fails and retries).
//
// Fair to every account: when that head of the due index fills the whole batch, more is due
// than one pass takes, and due order alone would let one account's burst (a million-contact
// enrollment, a cohort's waits ending together) hold back every other account until it is
// done. Then the batch is shared round-robin over the accounts with due runs (claim-shares.ts):
// the accounts with due runs are found a slice of the accounts table at a time
// (due-accounts.ts), those not in the head give up to their share of their own earliest due
// runs (one statement for all of them, SKIP LOCKED too), and the batch takes the first of every
// account, then the second, and so on. Runs read but not taken stay due (their locks end with
// the claim's transaction). A pass then costs five statements whatever the number of accounts.

// Accounts outside the head of the due index that one pass reads runs of: bounds the claim's
// statement (and with SLICE_ACCOUNTS, the pass's cost); the cursor moves on to the others.
const MAX_OTHER_ACCOUNTS = 64;

// A run no live claim holds: none, or its lease has ended (lease_until NULL with a token: a claim
// made before the lease had a column of its own, whose lease is its due_at).
const NOT_LEASED = '(claim_token IS NULL OR lease_until IS NULL OR lease_until <= ?)';

// What a claim reads of each due run.
const CLAIM_COLUMNS = 'id, account_id, sequence_id, due_at, claim_token, expired_claims';

// Dead letters: a run is claimed at most this many times in a row with its lease running out
// before its outcome is recorded (a pass that fails on it, a worker that dies on it); the next
// claim sets it aside instead (due_at NULL, dead_lettered_at, a reason), for the logs and the
// metrics to show and an operator to look at. Pause and resume make it due again.
export const DEAD_LETTER_AFTER = 5;

export interface Claim {
  token: string;
  // Each claimed run, its account and the time it was due (for the lag histogram).
  runs: DueRun[];
  // Where the next pass's search for accounts with due runs starts (due-accounts.ts).
  cursor: string;
  // The runs this claim set aside instead of claiming them.
  deadLettered: DeadLetter[];
}

export interface DeadLetter {
  id: string;
  accountId: string;
  sequenceId: string;
  expiredClaims: number;
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  // Where to look for accounts with due runs (the last claim's cursor).
  cursor?: string;
  // Accounts looked at per claim (due-accounts.ts SLICE_ACCOUNTS unless given).
  sliceAccounts?: number;
  // DEAD_LETTER_AFTER unless given.
  deadLetterAfter?: number;
}

// `now` is the database's time (the engine reads it before each claim, engine-clock.ts), not
// this process's: a process whose clock is ahead would take runs whose lease is still live, and
// one whose clock is behind would hand out leases that have already ended.
export async function claimDueRuns(db: Database, now: Date, options: ClaimOptions): Promise<Claim> {
  const token = randomUUID();
  const limit = Math.max(1, Math.floor(options.limit));
  const leaseEnd = new Date(now.getTime() + options.leaseMs);
  const deadLetterAfter = Math.max(1, Math.floor(options.deadLetterAfter ?? DEAD_LETTER_AFTER));
  return withTransaction(db, async (transaction) => {
    let cursor = options.cursor ?? '';
    const head = (await select<DueRow>(db, `${CLAIM_SELECT.replace('LIMIT ?', `LIMIT ${limit}`)}${skipLocked(db)}`, [now, now], transaction)).map(dueRun);
    let runs = head;
    if (head.length >= limit) {
      const inHead = new Set(head.map((run) => run.accountId));
      const found = await dueAccounts(db, now, { after: cursor, limit: MAX_OTHER_ACCOUNTS, slice: options.sliceAccounts }, transaction);
      cursor = found.cursor;
      const others = found.accounts.filter((accountId) => !inHead.has(accountId));
      const share = shareOf(limit, inHead.size + others.length);
      runs = roundRobin([...head, ...(await earliestDueOf(db, others, share, now, transaction))], limit);
    }
    // A run still carrying a claim token was claimed before and its lease ran out unrecorded.
    const deadLettered = runs.filter((run) => run.expiredClaims >= deadLetterAfter);
    runs = runs.filter((run) => run.expiredClaims < deadLetterAfter);
    if (deadLettered.length > 0) {
      await execute(
        db,
        `UPDATE sequence_runs SET expired_claims = expired_claims + 1, due_at = NULL, claim_token = NULL, dead_lettered_at = ?, reason = ?
         WHERE id IN (?)`,
        [now, `dead-lettered: claimed ${deadLetterAfter} times in a row, each lease ran out before its outcome was recorded`, deadLettered.map((run) => run.id)],
        transaction,
      );
    }
    if (runs.length > 0) {
      // expired_claims first: MySQL's UPDATE reads a column as the assignments before it left it.
      await execute(
        db,
        `UPDATE sequence_runs SET expired_claims = CASE WHEN claim_token IS NULL THEN 0 ELSE expired_claims + 1 END, lease_until = ?, claim_token = ?,
           dead_lettered_at = NULL WHERE id IN (?)`,
        [leaseEnd, token, runs.map((run) => run.id)],
        transaction,
      );
    }
    return {
      token,
      runs: runs.map(({ id, accountId, dueAt }) => ({ id, accountId, dueAt })),
      cursor,
      deadLettered: deadLettered.map(({ id, accountId, sequenceId, expiredClaims }) => ({ id, accountId, sequenceId, expiredClaims })),
    };
  });
}

interface DueRow {
  id: string;
  account_id: string;
  sequence_id: string;
  due_at: unknown;
  claim_token: string | null;
  expired_claims: number | string;
}

interface Candidate extends DueRun {
  sequenceId: string;
  // Its claims in a row whose lease ran out unrecorded, this one included if it is taken.
  expiredClaims: number;
}

function dueRun(row: DueRow): Candidate {
  return {
    id: row.id,
    accountId: row.account_id,
    sequenceId: row.sequence_id,
    dueAt: toDate(row.due_at),
    expiredClaims: row.claim_token === null ? 0 : Number(row.expired_claims) + 1,
  };
}

// Each account's `share` earliest due runs, locked (skipping those another claim holds), in one
// statement: a range read of sequence_runs_account_due per account, then the rows by key. (The
// inner reads take no locks: a run another claim is taking meanwhile is passed over here.)
async function earliestDueOf(db: Database, accountIds: readonly string[], share: number, now: Date, transaction: Transaction): Promise<Candidate[]> {
  if (accountIds.length === 0) return [];
  const rows = await select<DueRow>(
    db,
    `${earliestDueSql(accountIds.length, share)}${skipLocked(db)}`,
    [...accountIds.flatMap((accountId) => [accountId, now, now]), now, now],
    transaction,
  );
  return rows.map(dueRun);
}

// Its text for `accounts` accounts (also for the benchmark's EXPLAIN).
export function earliestDueSql(accounts: number, share: number): string {
  const perAccount = Array.from(
    { length: accounts },
    (_, index) => `SELECT * FROM (SELECT id FROM sequence_runs WHERE due_account = ? AND due_at <= ? AND ${NOT_LEASED} ORDER BY due_at LIMIT ${share}) a${index}`,
  ).join(' UNION ALL ');
  return `SELECT ${CLAIM_COLUMNS} FROM sequence_runs WHERE id IN (SELECT id FROM (${perAccount}) fair) AND due_at <= ? AND ${NOT_LEASED}`;
}

// The text of the claim's first SELECT (the head of the due index), for the benchmark's EXPLAIN.
export const CLAIM_SELECT = `SELECT ${CLAIM_COLUMNS} FROM sequence_runs WHERE due_at <= ? AND ${NOT_LEASED} ORDER BY due_at LIMIT ?`;

// The earliest time anything is due, for the loop to sleep until: the index's first non-null
// entry. No WHERE: MIN skips NULLs by itself, and with `due_at IS NOT NULL` written out MariaDB
// plans a range over every waiting run (456 ms at a million, bench/results/engine.md) instead
// of one index lookup.
export async function nextDueAt(db: Database): Promise<Date | null> {
  const [row] = await select<{ due_at: unknown }>(db, 'SELECT MIN(due_at) AS due_at FROM sequence_runs', []);
  return row?.due_at ? toDate(row.due_at) : null;
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
      trigger_activity: string | null;
      waited_activity: string | null;
    } & ContactRow
  >(
    db,
    `SELECT r.id AS run_id, r.sequence_id, r.contact_id, r.status AS run_status, r.version, r.current_step_id, r.visit, r.attempt,
            r.step_started_at, r.started_at, r.created_at AS run_created_at, r.trigger_activity, r.waited_activity,
            s.status AS sequence_status, s.exit_when, s.sending_window,
            ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')}
     FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id JOIN contacts c ON c.id = r.contact_id
     WHERE r.id IN (?) AND r.claim_token = ? AND r.current_step_id IS NOT NULL`,
    [[...dueAt.keys()], claim.token],
  );
  return rows.map((row): ClaimedRun => ({
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
    ...readRules(row),
    contact: row,
    trigger: readSnapshot(row.trigger_activity),
    waited: readSnapshot<WaitedActivity>(row.waited_activity),
  }));
}

function readRules(row: { exit_when: string | null; sending_window: string | null }) {
  try {
    return {
      exitWhen: row.exit_when ? parseJson<ExitRule[]>(row.exit_when) : [],
      sendingWindow: row.sending_window ? parseJson<SendingWindow>(row.sending_window) : null,
    };
  } catch (error) {
    return { exitWhen: [], sendingWindow: null, unreadable: `the sequence's exitWhen or sendingWindow cannot be read: ${(error as Error).message}` };
  }
}

// A stopping engine gives back what it claimed and did not start: due again at once, for
// another worker to take now rather than when the lease ends.
export async function releaseRuns(db: Database, runIds: readonly string[], token: string, now: Date): Promise<void> {
  if (runIds.length === 0) return;
  await execute(db, 'UPDATE sequence_runs SET due_at = ?, claim_token = NULL, lease_until = NULL WHERE id IN (?) AND claim_token = ?', [now, runIds, token]);
}

// A pass that failed ends its leases now: its runs (due, or the claim would not have taken them)
// can be claimed at once, and keep the claim token,
// so that the next claim counts this one as a claim that ran out unrecorded (a run that makes
// every pass fail is still set aside after DEAD_LETTER_AFTER of them).
export async function endLeases(db: Database, runIds: readonly string[], token: string, now: Date): Promise<void> {
  if (runIds.length === 0) return;
  await execute(db, 'UPDATE sequence_runs SET lease_until = ? WHERE id IN (?) AND claim_token = ? AND lease_until > ?', [now, runIds, token, now]);
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
