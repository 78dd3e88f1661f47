import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson } from '../../db/sql/rows';
import { execute, forUpdate, select } from '../../db/sql/statements';
import type { RunStatus } from '../../schemas/statuses';
import { nextRunState, runChangeSql } from '../runs/run-state';
import { waitedText } from './activity-snapshot';
import type { StoredActivity } from './stored-activity';
import { matchesValues, type MatchValues } from './wait-match';

// The runs waiting at a wait_for step that the activities just stored match, moved on in the
// activities' transaction (docs/sequences.md "Wait for an activity"): each records the activity
// as `waited` (with the visit of its step) and is due now, its claim void; the engine then goes
// on to the step's `next`. No polling: the match is decided as the activity commits.
//
// Statements, whatever the number of activities: the waits of their contacts for their names
// (run_waits_contact_activity: only those contacts' rows, however many runs wait for others),
// locked; the runs among them that a wait matches, locked (contacts, then runs: the intake holds
// the contacts, docs/architecture.md "One lock order"); one UPDATE per status (running, paused);
// one DELETE of the waits that ended (matched, or left behind by a run that moved on).
// A wait row is only believed against the run's visit and step, read under the run's lock: a
// run that timed out, was moved or ended meanwhile is not matched.

interface WaitRow {
  run_id: string;
  contact_id: string;
  activity: string;
  match_values: string | null;
  visit: number | string;
  step_id: string;
}

export async function matchWaits(
  db: Database,
  accountId: string,
  activities: readonly StoredActivity[],
  now: Date,
  transaction: Transaction,
): Promise<number> {
  if (activities.length === 0) return 0;
  const waits = await select<WaitRow>(
    db,
    `SELECT run_id, contact_id, activity, match_values, visit, step_id FROM run_waits
     WHERE account_id = ? AND contact_id IN (?) AND activity IN (?) ORDER BY run_id${forUpdate(db)}`,
    [accountId, [...new Set(activities.map((activity) => activity.contactId))], [...new Set(activities.map((activity) => activity.name))]],
    transaction,
  );
  if (waits.length === 0) return 0;
  // Each wait's first matching activity, in request order.
  const candidates = new Map<string, { wait: WaitRow; activity: StoredActivity }>();
  for (const wait of waits) {
    const values = parseJson<MatchValues>(wait.match_values);
    const activity = activities.find((one) => one.contactId === wait.contact_id && one.name === wait.activity && matchesValues(values, one.properties));
    if (activity) candidates.set(wait.run_id, { wait, activity });
  }
  if (candidates.size === 0) return 0;
  const runs = await select<{ id: string; status: RunStatus; visit: number | string; current_step_id: string | null; step_started_at: unknown; due_at: unknown }>(
    db,
    `SELECT id, status, visit, current_step_id, step_started_at, due_at FROM sequence_runs WHERE id IN (?)${forUpdate(db)}`,
    [[...candidates.keys()]],
    transaction,
  );
  const matched = runs.filter((run) => {
    const { wait } = candidates.get(run.id)!;
    return (
      (run.status === 'running' || run.status === 'paused') &&
      run.step_started_at !== null &&
      Number(run.visit) === Number(wait.visit) &&
      run.current_step_id === wait.step_id
    );
  });
  for (const status of ['running', 'paused'] as const) {
    const group = matched.filter((run) => run.status === status);
    if (group.length === 0) continue;
    // The state machine's answer for a matched wait of this status (run-state.ts).
    const { set, values } = runChangeSql(nextRunState({ status, claimed: false }, { kind: 'matched' }, now), now);
    const texts = group.flatMap((run) => {
      const { wait, activity } = candidates.get(run.id)!;
      return [run.id, waitedText(activity, Number(wait.visit))];
    });
    await execute(
      db,
      `UPDATE sequence_runs SET ${set}, waited_activity = CASE id ${group.map(() => 'WHEN ? THEN ?').join(' ')} ELSE waited_activity END WHERE id IN (?)`,
      [...values, ...texts, group.map((run) => run.id)],
      transaction,
    );
  }
  // The matched waits end; so do those read for a run that is no longer at them (a wait row of
  // another visit: the run timed out, moved or ended, and its own writer left the row).
  await execute(db, 'DELETE FROM run_waits WHERE run_id IN (?)', [[...candidates.keys()]], transaction);
  return matched.length;
}
