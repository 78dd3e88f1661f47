import type { Database } from '../../db/database';
import { parseJson, toIso, toIsoOrNull } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { ExecutionDto, RunDetailDto } from '../../schemas/sequence';
import { normalizeId } from '../ids';
import { readSnapshot } from '../activities/activity-snapshot';
import { readSteps } from '../runs/sequence-versions';
import { messagesOfRun } from '../messages/run-messages';
import { requireSequence } from './find-sequence';
import { runRetry } from './run-retry';
import { RUN_COLUMNS_READ, runFromRow, type RunRow } from '../runs/runs';
import { runsWaiting, waitEndsAt, WAITING_COLUMNS, type WaitingRow } from './run-waiting';

// GET /sequences/{id}/runs/{runId}: the run, where it is, what it waits for and until when, and
// every step execution, oldest first (by visit, then attempt), each with the message its visit
// sent (an email or WhatsApp step's). `now` decides whether a step not
// yet begun is due now or held for the sending window.
export async function getRunDetail(
  db: Database,
  input: { accountId: string; sequenceId: string; runId: string },
  now: Date = new Date(),
): Promise<RunDetailDto> {
  const sequenceId = await requireSequence(db, { accountId: input.accountId, sequenceId: input.sequenceId, mustBeActive: false });
  const id = normalizeId(input.runId);
  const [run] = id
    ? await select<RunRow & WaitingRow & { sequence_id: string; trigger_activity: string | null }>(
        db,
        `SELECT ${RUN_COLUMNS_READ}, sequence_id, trigger_activity, ${WAITING_COLUMNS} FROM sequence_runs WHERE id = ? AND sequence_id = ? AND account_id = ?`,
        [id, sequenceId, input.accountId],
      )
    : [];
  if (!run) throw new NotFoundError('Run');
  const executions = await select<{
    step_id: string;
    visit: number | string;
    type: string;
    attempt: number | string;
    status: ExecutionDto['status'];
    reason: string | null;
    detail: string | null;
    started_at: unknown;
    finished_at: unknown;
  }>(
    db,
    'SELECT step_id, visit, type, attempt, status, reason, detail, started_at, finished_at FROM run_step_executions WHERE run_id = ? ORDER BY visit, attempt',
    [run.id],
  );
  const waiting = (await runsWaiting(db, [run], now)).get(run.id)!;
  const messages = await messagesOfRun(db, run.id);
  // The one execution a run can have under way is its current step's.
  const waitEnd = waitEndsAt(run);
  return {
    ...runFromRow(run),
    sequenceId,
    contactId: run.contact_id,
    ...waiting,
    retry: await runRetry(db, run, waiting.waitingFor),
    trigger: readSnapshot(run.trigger_activity),
    awaiting: waiting.waitingFor === 'activity' ? await awaitedActivity(db, run, sequenceId) : null,
    executions: executions.map((row) => ({
      stepId: row.step_id,
      type: row.type,
      attempt: Number(row.attempt),
      status: row.status,
      reason: row.reason,
      detail: row.detail ? parseJson<Record<string, unknown>>(row.detail) : null,
      startedAt: toIso(row.started_at),
      finishedAt: toIsoOrNull(row.finished_at),
      endsAt: (row.type === 'wait' || row.type === 'wait_for') && row.status === 'running' ? waitEnd : null,
      message: messages.get(Number(row.visit)) ?? null,
    })),
  };
}

// What the run's wait_for waits for: its wait row, at the run's visit; none (a match value
// rendered empty: only the timeout ends it), the step's activity with no match.
async function awaitedActivity(db: Database, run: RunRow & WaitingRow, sequenceId: string): Promise<RunDetailDto['awaiting']> {
  const [wait] = await select<{ activity: string; match_values: string | null }>(db, 'SELECT activity, match_values FROM run_waits WHERE run_id = ? AND visit = ?', [run.id, Number(run.visit)]);
  if (wait) return { activity: wait.activity, match: wait.match_values ? parseJson<Record<string, unknown> | null>(wait.match_values) : null };
  const steps = await readSteps(db, sequenceId, run.version === null || run.version === undefined ? null : Number(run.version));
  const step = steps.find((candidate) => candidate.id === run.current_step_id);
  return step?.type === 'wait_for' ? { activity: step.activity, match: null } : null;
}
