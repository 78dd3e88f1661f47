import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { parseJson, toDate, toIso } from '../../db/sql/rows';
import { execute, insertRows, select } from '../../db/sql/statements';
import { waitedText, type ActivitySnapshot } from '../activities/activity-snapshot';
import { matchesValues } from '../activities/wait-match';
import { byAccount } from './run-queue';
import type { ClaimedRun } from './claimed-run';

// The wait_for steps a record begins and ends (docs/sequences.md "Wait for an activity"), in
// the record's transaction, after the runs' UPDATE, in a handful of statements whatever the
// batch:
//   1. the run_waits rows of the runs that left a wait_for step (or began one again) go;
//   2. an activity already recorded that the wait matches (one that committed after the run came
//      to the step and before this record locked its contact, ending-runs.ts) ends it at once:
//      the run records it as `waited` and is due now, so no activity is lost to the moment
//      between a run's arrival and its wait's row;
//   3. the other waits get their row, which an activity's intake finds as it commits
//      (activities/match-waits.ts).
// A wait whose match rendered empty matches nothing: no row, it ends at its timeout.

export interface BeganWait {
  run: ClaimedRun;
  visit: number;
  stepId: string;
  activity: string;
  match: Record<string, unknown> | null;
  since: Date;
}

const WAIT_COLUMNS = ['run_id', 'account_id', 'contact_id', 'activity', 'match_values', 'visit', 'step_id', 'created_at'];

export async function recordWaits(
  db: Database,
  input: { began: readonly BeganWait[]; left: readonly string[]; now: Date },
  transaction: Transaction,
): Promise<number> {
  const { now } = input;
  const gone = [...new Set([...input.left, ...input.began.map((wait) => wait.run.id)])];
  if (gone.length > 0) await execute(db, 'DELETE FROM run_waits WHERE run_id IN (?)', [gone], transaction);
  const live = input.began.filter((wait) => wait.match !== null);
  if (live.length === 0) return 0;
  const matched = await alreadyRecorded(db, live, transaction);
  if (matched.size > 0) {
    const cases = [...matched].flatMap(([runId, { wait, activity }]) => [runId, waitedText(activity, wait.visit)]);
    await execute(
      db,
      `UPDATE sequence_runs SET waited_activity = CASE id ${[...matched.keys()].map(() => 'WHEN ? THEN ?').join(' ')} ELSE waited_activity END,
         due_at = ?, updated_at = ? WHERE id IN (?)`,
      [...cases, now, now, [...matched.keys()]],
      transaction,
    );
  }
  const rows = live
    .filter((wait) => !matched.has(wait.run.id))
    .map((wait) => [wait.run.id, wait.run.accountId, wait.run.contactId, wait.activity, JSON.stringify(wait.match), wait.visit, wait.stepId, now]);
  await insertRows(db, 'run_waits', WAIT_COLUMNS, rows, transaction);
  return matched.size;
}

// Each wait's first matching activity among those its contact had recorded since the run came to
// the step: one SELECT per account in the batch, through activities_contact_occurred's contact.
async function alreadyRecorded(
  db: Database,
  waits: readonly BeganWait[],
  transaction: Transaction,
): Promise<Map<string, { wait: BeganWait; activity: ActivitySnapshot }>> {
  const matched = new Map<string, { wait: BeganWait; activity: ActivitySnapshot }>();
  for (const [accountId, list] of byAccount(waits.map((wait) => ({ ...wait, accountId: wait.run.accountId })))) {
    const since = new Date(Math.min(...list.map((wait) => wait.since.getTime())));
    const rows = await select<{ id: string; contact_id: string; name: string; properties: string; occurred_at: unknown; received_at: unknown }>(
      db,
      `SELECT id, contact_id, name, properties, occurred_at, received_at FROM activities
       WHERE account_id = ? AND contact_id IN (?) AND name IN (?) AND received_at >= ? ORDER BY received_at, row_id`,
      [accountId, [...new Set(list.map((wait) => wait.run.contactId))], [...new Set(list.map((wait) => wait.activity))], since],
      transaction,
    );
    if (rows.length === 0) continue;
    const activities = rows.map((row) => ({
      contactId: row.contact_id,
      receivedAt: toDate(row.received_at),
      snapshot: { id: row.id, name: row.name, properties: parseJson<Record<string, unknown>>(row.properties), occurredAt: toIso(toDate(row.occurred_at)) },
    }));
    for (const wait of list) {
      const found = activities.find(
        (activity) =>
          activity.contactId === wait.run.contactId &&
          activity.snapshot.name === wait.activity &&
          activity.receivedAt.getTime() >= wait.since.getTime() &&
          matchesValues(wait.match, activity.snapshot.properties),
      );
      if (found) matched.set(wait.run.id, { wait, activity: found.snapshot });
    }
  }
  return matched;
}
