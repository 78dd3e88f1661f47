import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toIso, toIsoOrNull } from '../../db/sql/rows';
import { insertIgnoringConflicts, select } from '../../db/sql/statements';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../../schemas/statuses';
import type { NewEventOf } from '../../schemas/event';
import type { RunDto } from '../../schemas/sequence';
import { runCreatedEvent } from '../events/run-events';
import { newRowId } from '../ids';
import type { RequiredSequence } from './required-sequence';
import { countRunMoves } from '../run-status/run-status-counts';
import { countRunProgress } from '../analytics/progress-counters';

// Sequence runs: how they are written and read, set-based.

const ACTIVE_STATUSES_SQL = `(${ACTIVE_RUN_STATUSES.map((s) => `'${s}'`).join(', ')})`;

// "The run is active", in the form each database's indexes serve: the generated active_flag
// on MySQL (its indexes hold that column, not the status), the partial indexes' own
// predicate on SQLite.
export function activeRun(db: Database): string {
  return db.dialect === 'sqlite' ? `status IN ${ACTIVE_STATUSES_SQL}` : 'active_flag = 1';
}

const RUN_COLUMNS = [
  'id',
  'account_id',
  'sequence_id',
  'contact_id',
  'status',
  'started_at',
  'completed_at',
  'created_at',
  'updated_at',
  'version',
  'current_step_id',
  'due_at',
  'trigger_activity',
];

export const RUN_COLUMNS_READ = 'id, contact_id, status, started_at, completed_at, created_at, version, current_step_id, reason';
export const RUN_SELECT = `SELECT ${RUN_COLUMNS_READ} FROM sequence_runs`;

export interface RunRow {
  id: string;
  contact_id: string;
  status: string;
  started_at: unknown;
  completed_at: unknown;
  created_at: unknown;
  version: number | string | null;
  current_step_id: string | null;
  reason: string | null;
}

export function runFromRow(row: RunRow): RunDto {
  return {
    id: row.id,
    status: row.status as RunStatus,
    startedAt: toIso(row.started_at),
    completedAt: toIsoOrNull(row.completed_at),
    createdAt: toIso(row.created_at),
    version: row.version === null || row.version === undefined ? null : Number(row.version),
    currentStepId: row.current_step_id ?? null,
    reason: row.reason ?? null,
  };
}

export function isActive(status: string): boolean {
  return (ACTIVE_RUN_STATUSES as readonly string[]).includes(status);
}

// Contacts among contactIds that have an active run in the sequence.
export async function contactsWithActiveRun(
  db: Database,
  sequenceId: string,
  contactIds: readonly string[],
  transaction: Transaction,
): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const rows = await select<{ contact_id: string }>(
    db,
    `SELECT contact_id FROM sequence_runs WHERE sequence_id = ? AND contact_id IN (?) AND ${activeRun(db)}`,
    [sequenceId, contactIds],
    transaction,
  );
  return new Set(rows.map((row) => row.contact_id));
}

// Starts a pending run for each contact, in two statements. A run of a sequence with steps
// starts at its first step, due at once (the engine takes it from there: src/services/engine);
// one of a sequence without steps waits to be moved from outside, as before steps existed. The one-active-run unique index
// decides, not this code: a contact that gained an active run meanwhile (a concurrent
// request) is left out. Returns the run of each contact that got one, as the API returns it.
export async function startRuns(
  db: Database,
  // triggers: the activity that starts each contact's run, as its snapshot's JSON (entry by
  // event, activities/enter-sequences.ts); absent for an API enrollment.
  input: { accountId: string; sequence: RequiredSequence; contactIds: readonly string[]; triggers?: ReadonlyMap<string, string> },
  transaction: Transaction,
): Promise<Map<string, RunDto>> {
  if (input.contactIds.length === 0) return new Map();
  const now = new Date();
  const { version, firstStepId } = input.sequence;
  // Sorted, so concurrent enrolls take index locks in one order and do not deadlock.
  const proposed = [...input.contactIds].sort().map((contactId) => ({ contactId, runId: newRowId() }));
  await insertIgnoringConflicts(
    db,
    'sequence_runs',
    RUN_COLUMNS,
    proposed.map(({ contactId, runId }) => [
      runId,
      input.accountId,
      input.sequence.id,
      contactId,
      'pending',
      now,
      null,
      now,
      now,
      version,
      firstStepId,
      firstStepId === null ? null : now,
      input.triggers?.get(contactId) ?? null,
    ]),
    transaction,
  );
  const inserted = await select<{ id: string; contact_id: string }>(
    db,
    'SELECT id, contact_id FROM sequence_runs WHERE id IN (?)',
    [proposed.map((p) => p.runId)],
    transaction,
  );
  countRunMoves(db, transaction, inserted.map(() => ({ sequenceId: input.sequence.id, from: null, to: 'pending' as const })));
  countRunProgress(db, transaction, now, inserted.map(() => ({ sequenceId: input.sequence.id, from: null, to: firstStepId, enrolled: true })));
  return new Map(
    inserted.map((row) => [
      row.contact_id,
      runFromRow({
        id: row.id,
        contact_id: row.contact_id,
        status: 'pending',
        started_at: now,
        completed_at: null,
        created_at: now,
        version,
        current_step_id: firstStepId,
        reason: null,
      }),
    ]),
  );
}

// run.created for each run started, in contact id order (the order they were inserted in).
export function runsCreatedEvents(sequenceId: string, started: Map<string, RunDto>): NewEventOf[] {
  return [...started.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([contactId, run]) => runCreatedEvent(run, sequenceId, contactId));
}

// How many more active runs the account may start now; null when it has no limit.
// A limited account's enrollments take turns on its run_limit_locks row (MySQL; SQLite has
// one writer anyway), so the count below cannot be raced and the limit holds under any
// concurrency. The count reads what the previous holder committed: transactions are READ
// COMMITTED on MySQL (src/db/database.ts).
export async function remainingRunCapacity(
  db: Database,
  accountId: string,
  transaction: Transaction,
): Promise<{ remaining: number; limit: number } | null> {
  const readLimit = async () => {
    const [account] = await select<{ max_active_runs: number | null }>(
      db,
      'SELECT max_active_runs FROM accounts WHERE id = ?',
      [accountId],
      transaction,
    );
    return account?.max_active_runs ?? null;
  };
  let limit = await readLimit();
  if (limit === null) return null;
  if (db.dialect !== 'sqlite') {
    await insertIgnoringConflicts(db, 'run_limit_locks', ['id'], [[accountId]], transaction);
    // Again under the lock: an administrator may have changed it meanwhile.
    limit = await readLimit();
    if (limit === null) return null;
  }
  const [{ active }] = await select<{ active: number | string }>(
    db,
    `SELECT COUNT(*) AS active FROM sequence_runs WHERE account_id = ? AND ${activeRun(db)}`,
    [accountId],
    transaction,
  );
  return { remaining: Math.max(0, Number(limit) - Number(active)), limit: Number(limit) };
}
