import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { forUpdate, select } from '../../db/sql/statements';
import { endRuns } from './end-runs';
import type { NewEventOf } from '../../schemas/event';
import type { ExitRule } from '../../schemas/sequence-definition';
import { runStatusChangedEvent } from '../events/run-events';
import type { RunStatus } from '../../schemas/statuses';
import { toIso, toIsoOrNull } from '../../db/sql/rows';
import { couldTriggerExit, exitReason, matchingExitRule, type ContactFacts } from './exit-rules';

export interface ChangedContact {
  id: string;
  before: ContactFacts | null;
  after: ContactFacts;
}

// Cancels, in the contact writer's transaction, the active runs whose sequence's exit rules the
// written contacts now meet; answers their run.status_changed events, for the writer to record
// with its own. The writer holds the contacts' locks, and runs are locked after their contact
// (docs/idempotency.md "Concurrency and retries"). exceptRunIds: runs the caller is itself
// moving (the engine's own step), which it checks itself.
export async function cancelRunsOnExit(
  db: Database,
  accountId: string,
  contacts: readonly ChangedContact[],
  transaction: Transaction,
  exceptRunIds: ReadonlySet<string> = new Set(),
): Promise<NewEventOf[]> {
  const candidates = contacts.filter((contact) => couldTriggerExit(contact.before, contact.after));
  if (candidates.length === 0) return [];
  // Most accounts have no exit rules at all: one look at its sequences (a few rows, by index)
  // spares the runs' lock and read.
  const [withRules] = await select<{ id: string }>(db, 'SELECT id FROM sequences WHERE account_id = ? AND exit_when IS NOT NULL LIMIT 1', [accountId], transaction);
  if (!withRules) return [];
  const byId = new Map(candidates.map((contact) => [contact.id, contact.after]));
  // Locked before they are read (runs after their contacts, which the writer holds): a run an
  // engine is recording is read as the engine leaves it, never as it was before.
  await select(
    db,
    `SELECT id FROM sequence_runs WHERE contact_id IN (?) AND status IN ('pending', 'running', 'paused')${forUpdate(db)}`,
    [[...byId.keys()]],
    transaction,
  );
  const rows = await select<{
    id: string;
    sequence_id: string;
    contact_id: string;
    status: RunStatus;
    started_at: unknown;
    created_at: unknown;
    version: number | string | null;
    current_step_id: string | null;
    exit_when: string;
  }>(
    db,
    `SELECT r.id, r.sequence_id, r.contact_id, r.status, r.started_at, r.created_at, r.version, r.current_step_id, s.exit_when
     FROM sequence_runs r JOIN sequences s ON s.id = r.sequence_id
     WHERE r.contact_id IN (?) AND r.status IN ('pending', 'running', 'paused') AND s.exit_when IS NOT NULL`,
    [[...byId.keys()]],
    transaction,
  );
  const now = new Date();
  const byReason = new Map<string, Array<{ id: string; sequenceId: string; currentStepId: string | null; status: RunStatus }>>();
  const events: NewEventOf[] = [];
  for (const row of rows) {
    if (exceptRunIds.has(row.id)) continue;
    const rule = matchingExitRule(parseJson<ExitRule[]>(row.exit_when), byId.get(row.contact_id)!);
    if (!rule) continue;
    const reason = exitReason(rule);
    const ended = { id: row.id, sequenceId: row.sequence_id, currentStepId: row.current_step_id, status: row.status };
    const same = byReason.get(reason);
    if (same) same.push(ended);
    else byReason.set(reason, [ended]);
    const run = {
      id: row.id,
      status: 'cancelled' as const,
      startedAt: toIso(row.started_at),
      completedAt: toIsoOrNull(now),
      createdAt: toIso(row.created_at),
      version: row.version === null ? null : Number(row.version),
      currentStepId: row.current_step_id,
      reason,
    };
    events.push(runStatusChangedEvent(run, row.sequence_id, row.contact_id, row.status));
  }
  for (const [reason, runs] of byReason) await endRuns(db, runs, { status: 'cancelled', reason, at: now }, transaction);
  return events;
}
