import type { Database } from '../../db/database';
import { toIsoOrNull } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import type { RunDetailDto } from '../../schemas/sequence';
import { isActive } from '../runs/runs';

// A run's retry, as its timeline shows it: the send of the run's current visit (the outbox row,
// runs/outbox.ts) that has failed attempts behind it and may still go out. The run
// itself holds no due time while its send waits, so the attempts, the last error and the next
// attempt's time are the send's. One statement, through outbox_run_visit.
export async function runRetry(
  db: Database,
  run: { id: string; status: string; visit: number | string },
  waitingFor: RunDetailDto['waitingFor'],
): Promise<RunDetailDto['retry']> {
  if (!isActive(run.status)) return null;
  const [send] = await select<{ status: string; attempt: number | string; last_error: string | null; due_at: unknown }>(
    db,
    "SELECT status, attempt, last_error, due_at FROM outbox WHERE run_id = ? AND run_visit = ? AND status IN ('queued', 'held', 'sending')",
    [run.id, Number(run.visit)],
  );
  if (!send || Number(send.attempt) === 0) return null;
  return {
    attempts: Number(send.attempt),
    lastError: send.last_error,
    // Sending: on the wire. Held while the run is paused: it waits for the resume, not for a
    // time. Held for a run that carries on (resumed, its sequence active again): queued again
    // at its next look, keeping its own time when that is later (outbox.ts queueSends).
    // Its sequence not active: nothing goes out until it is again, whatever the send's time.
    nextAttemptAt: send.status === 'sending' || run.status === 'paused' || waitingFor === 'sequence_paused' || waitingFor === 'channel_paused' ? null : toIsoOrNull(send.due_at),
  };
}
