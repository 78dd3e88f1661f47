import type { Transaction } from 'sequelize';
import type { Database } from '../../../db/database';
import { toDate } from '../../../db/sql/rows';
import { forUpdate, select } from '../../../db/sql/statements';
import type { RunDto } from '../../../schemas/sequence';
import type { RunStatus } from '../../../schemas/statuses';
import { lockContactsById } from '../../contacts/lock-contacts';
import { runFromRow } from '../../runs/runs';
import { byAccount } from '../run-queue';
import type { RunChange, RunFacts } from '../../runs/run-state';

// The runs of outbound outcomes, locked in the one order: their contacts first (through the
// email index, in email order), then the runs. Recording an outcome can end a run, and ending
// it rewrites its entry in the one-active-run index, whose foreign key makes MySQL share-lock
// the contact: taken first here, that lock never waits behind a pause holding the contact.

export interface LockedRun {
  id: string;
  account_id: string;
  sequence_id: string;
  contact_id: string;
  status: RunStatus;
  version: number | string | null;
  current_step_id: string | null;
  visit: number | string;
  step_started_at: unknown;
  due_at: unknown;
  paused_due_at: unknown;
  paused_from: RunStatus | null;
  claim_token: string | null;
  started_at: unknown;
  completed_at: unknown;
  created_at: unknown;
  reason: string | null;
}

export async function lockRunsWithContacts(db: Database, runIds: readonly string[], transaction: Transaction): Promise<Map<string, LockedRun>> {
  if (runIds.length === 0) return new Map();
  const owners = await select<{ account_id: string; contact_id: string }>(db, 'SELECT account_id, contact_id FROM sequence_runs WHERE id IN (?)', [runIds], transaction);
  for (const [accountId, list] of byAccount(owners.map((row) => ({ accountId: row.account_id, contactId: row.contact_id })))) {
    await lockContactsById(db, accountId, [...new Set(list.map((item) => item.contactId))], transaction);
  }
  const rows = await select<LockedRun>(
    db,
    `SELECT id, account_id, sequence_id, contact_id, status, version, current_step_id, visit, step_started_at, due_at, paused_due_at, paused_from,
            claim_token, started_at, completed_at, created_at, reason
     FROM sequence_runs WHERE id IN (?)${forUpdate(db)}`,
    [runIds],
    transaction,
  );
  return new Map(rows.map((row) => [row.id, row]));
}

const date = (value: unknown): Date | null => (value === null || value === undefined ? null : toDate(value));

export function factsOf(run: LockedRun): RunFacts {
  return {
    status: run.status,
    currentStepId: run.current_step_id,
    stepStartedAt: date(run.step_started_at),
    dueAt: date(run.due_at),
    pausedDueAt: date(run.paused_due_at),
    pausedFrom: run.paused_from,
    claimed: run.claim_token !== null,
  };
}

// The run as the API and the events show it, after the change.
export function changedRunDto(run: LockedRun, change: RunChange): RunDto & { sequenceId: string; contactId: string } {
  const { set } = change;
  const dto = runFromRow({
    ...run,
    status: change.to,
    version: set.version ?? run.version,
    current_step_id: set.currentStepId !== undefined ? set.currentStepId : run.current_step_id,
    completed_at: set.completedAt !== undefined ? set.completedAt : run.completed_at,
    reason: set.reason !== undefined ? set.reason : run.reason,
  });
  return { ...dto, sequenceId: run.sequence_id, contactId: run.contact_id };
}
