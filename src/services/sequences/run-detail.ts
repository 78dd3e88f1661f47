import type { Database } from '../../db/database';
import { parseJson, toIso, toIsoOrNull } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import { NotFoundError } from '../../errors/app-errors';
import type { ExecutionDto, RunDetailDto } from '../../schemas/sequence';
import { normalizeId } from '../ids';
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
    ? await select<RunRow & WaitingRow & { sequence_id: string }>(
        db,
        `SELECT ${RUN_COLUMNS_READ}, sequence_id, ${WAITING_COLUMNS} FROM sequence_runs WHERE id = ? AND sequence_id = ? AND account_id = ?`,
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
    executions: executions.map((row) => ({
      stepId: row.step_id,
      type: row.type,
      attempt: Number(row.attempt),
      status: row.status,
      reason: row.reason,
      detail: row.detail ? parseJson<Record<string, unknown>>(row.detail) : null,
      startedAt: toIso(row.started_at),
      finishedAt: toIsoOrNull(row.finished_at),
      endsAt: row.type === 'wait' && row.status === 'running' ? waitEnd : null,
      message: messages.get(Number(row.visit)) ?? null,
    })),
  };
}
