import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson, toDate, toIso, toIsoOrNull } from '../../db/sql/rows';
import { forUpdate, select } from '../../db/sql/statements';
import type { NewEventOf } from '../../schemas/event';
import type { Goal } from '../../schemas/sequence-definition';
import type { RunStatus } from '../../schemas/statuses';
import { runStatusChangedEvent } from '../events/run-events';
import { endRuns } from '../exit-rules/end-runs';
import { addDuration } from '../runs/schedule/durations';
import { allHold } from './property-conditions';
import type { StoredActivity } from './stored-activity';

// Goals (docs/activities.md "Goals"): an activity that meets a sequence's goal completes its
// contact's active run of that sequence with reason `goal_met`, wherever the run is (a wait, a
// wait_for, a send queued: cancelled as any end cancels it). It counts when it occurred at or
// after the run started and, with `within`, no later than that long after. In the activities'
// transaction: the sequences with a goal on these names (sequences_goal_activity, no lock: a
// goal changed meanwhile applies from the next activity), then their contacts' active runs,
// locked (contacts, then runs), then one UPDATE (endRuns) for all that converted.

export const GOAL_MET = 'goal_met';

export async function meetGoals(
  db: Database,
  accountId: string,
  activities: readonly StoredActivity[],
  now: Date,
  transaction: Transaction,
): Promise<NewEventOf[]> {
  if (activities.length === 0) return [];
  const names = [...new Set(activities.map((activity) => activity.name))];
  const sequences = await select<{ id: string; goal: string }>(
    db,
    'SELECT id, goal FROM sequences WHERE account_id = ? AND goal_activity IN (?)',
    [accountId, names],
    transaction,
  );
  if (sequences.length === 0) return [];
  const goals = new Map(sequences.map((row) => [row.id, parseJson<Goal>(row.goal)]));
  const runs = await select<{
    id: string;
    sequence_id: string;
    contact_id: string;
    status: RunStatus;
    started_at: unknown;
    created_at: unknown;
    version: number | string | null;
    current_step_id: string | null;
  }>(
    db,
    `SELECT id, sequence_id, contact_id, status, started_at, created_at, version, current_step_id FROM sequence_runs
     WHERE sequence_id IN (?) AND contact_id IN (?) AND status IN ('pending', 'running', 'paused') ORDER BY id${forUpdate(db)}`,
    [[...goals.keys()], [...new Set(activities.map((activity) => activity.contactId))]],
    transaction,
  );
  const converted = runs.filter((run) => {
    const goal = goals.get(run.sequence_id)!;
    const startedAt = toDate(run.started_at);
    // Within: counted in UTC (a goal has no zone of its own).
    const deadline = goal.within ? addDuration(startedAt, goal.within, 'UTC') : null;
    return activities.some(
      (activity) =>
        activity.contactId === run.contact_id &&
        activity.name === goal.activity &&
        activity.occurredAtDate.getTime() >= startedAt.getTime() &&
        (deadline === null || activity.occurredAtDate.getTime() <= deadline.getTime()) &&
        allHold(goal.where, activity.properties),
    );
  });
  if (converted.length === 0) return [];
  await endRuns(
    db,
    converted.map((run) => ({ id: run.id, sequenceId: run.sequence_id, currentStepId: run.current_step_id, status: run.status })),
    { status: 'completed', reason: GOAL_MET, at: now },
    transaction,
  );
  // The run's step stays named (endState keeps it with a reason): the timeline shows where it
  // converted.
  return converted.map((run) =>
    runStatusChangedEvent(
      {
        id: run.id,
        status: 'completed',
        startedAt: toIso(run.started_at),
        completedAt: toIsoOrNull(now),
        createdAt: toIso(run.created_at),
        version: run.version === null ? null : Number(run.version),
        currentStepId: run.current_step_id,
        reason: GOAL_MET,
      },
      run.sequence_id,
      run.contact_id,
      run.status,
    ),
  );
}
