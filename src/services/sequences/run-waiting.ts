import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toIsoOrNull } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import type { WaitingFor } from '../../schemas/sequence';
import type { Step } from '../../schemas/sequence-definition';
import { pausedStepKey, pausedSteps } from '../channels/channel-pauses';
import { readVersions, versionKey } from '../runs/sequence-versions';

// What a run is waiting for, and until when (docs/sequences.md "How runs move"), derived from
// what the run's row already holds: nothing is stored for it. The engine writes due_at for every
// reason a run waits; the reason follows from the rest of the row:
// - `sequence_paused`: its sequence is not active, or the engine set it aside for that (due_at
//   null): it waits for the sequence to be active again, with no time;
// - `wait`: its step is a wait that has begun (step_started_at): due_at is the wait's end;
// - `activity`: its step is a wait_for that has begun: due_at is its timeout (a matching
//   activity makes it due now);
// - `retry`: its step is a webhook with a failed attempt behind it. The run itself waits at the
//   step with no due time (due_at NULL) while the outbound layer holds its send: the time is the
//   send's, the outbox row of the run's visit (runs/outbox.ts), queued until its due_at;
// - `channel_paused`: its step's send waits, queued, for its channel (or the step's template)
//   to resume (channels/channel-pauses.ts): no time;
// - `window`: its step has not begun and is due later: the engine deferred it to the sending
//   window's next opening, due_at;
// - `frequency_cap`: its email or WhatsApp message was held back by the contact's frequency cap
//   (engine/frequency-cap-gate.ts) until due_at: capped_until is that same time (a later move of
//   due_at leaves capped_until behind, and it no longer counts);
// - null: due now (the engine takes it at its next look; a first send queued, with its time),
//   being carried out now (claimed: the row's due_at is then its lease's end, not a time the run
//   waits for; a send on the wire), paused (resume says what comes next), ended, or at no step
//   (a sequence without steps).

export const WAITING_COLUMNS = 'due_at, paused_due_at, claim_token, step_started_at, attempt, visit, capped_until';

export interface WaitingRow {
  status: string;
  version: number | string | null;
  current_step_id: string | null;
  due_at: unknown;
  paused_due_at: unknown;
  claim_token: string | null;
  step_started_at: unknown;
  attempt: number | string;
  visit: number | string;
  capped_until?: unknown;
}

// The send of the run's visit, for a run that waits at a step with no due time of its own.
export interface WaitingSend {
  status: string;
  attempt: number | string;
  due_at: unknown;
  // Its channel (or its step's template) is paused (channels/channel-pauses.ts).
  paused?: boolean;
}

export interface RunWaiting {
  dueAt: string | null;
  waitingFor: WaitingFor;
}

const NOTHING: RunWaiting = { dueAt: null, waitingFor: null };

export function runWaiting(row: WaitingRow, step: Step | undefined, sequenceStatus: string, now: Date, send?: WaitingSend): RunWaiting {
  if ((row.status !== 'pending' && row.status !== 'running') || row.current_step_id === null) return NOTHING;
  if (sequenceStatus === 'active' && (row.due_at === null || row.due_at === undefined) && send) return sendWaiting(send);
  if (sequenceStatus !== 'active' || row.due_at === null || row.due_at === undefined) return { dueAt: null, waitingFor: 'sequence_paused' };
  if (row.claim_token !== null) return NOTHING;
  const dueAt = toIsoOrNull(row.due_at)!;
  if (row.capped_until !== null && row.capped_until !== undefined && toIsoOrNull(row.capped_until) === dueAt && (step?.type === 'email' || step?.type === 'whatsapp')) {
    return { dueAt, waitingFor: 'frequency_cap' };
  }
  if (step?.type === 'wait' && row.step_started_at !== null) return { dueAt, waitingFor: 'wait' };
  // A wait_for under way: due at its timeout; matched, it is due now (null: it goes on now).
  if (step?.type === 'wait_for' && row.step_started_at !== null) return Date.parse(dueAt) > now.getTime() ? { dueAt, waitingFor: 'activity' } : { dueAt, waitingFor: null };
  if (step?.type === 'webhook' && Number(row.attempt) > 0) return { dueAt, waitingFor: 'retry' };
  if (row.step_started_at === null && Date.parse(dueAt) > now.getTime()) return { dueAt, waitingFor: 'window' };
  return { dueAt, waitingFor: null };
}

// A run waiting for its send: a retry until the send's next attempt, a first send due at its
// time, nothing while the request is on the wire.
function sendWaiting(send: WaitingSend): RunWaiting {
  if (send.paused && (send.status === 'queued' || send.status === 'held')) return { dueAt: null, waitingFor: 'channel_paused' };
  if (send.status !== 'queued') return NOTHING;
  const dueAt = toIsoOrNull(send.due_at);
  return { dueAt, waitingFor: Number(send.attempt) > 0 ? 'retry' : null };
}

// When a wait that is waiting ends: the run's due time, kept aside while the run is paused
// (resume gives it back). Null while the engine holds the run: it is ending now.
export function waitEndsAt(row: WaitingRow): string | null {
  if (row.status === 'paused') return toIsoOrNull(row.paused_due_at);
  return row.claim_token === null ? toIsoOrNull(row.due_at) : null;
}

// For a page of runs, what each waits for: the steps of their versions (the versions' cache, or
// one statement) and their sequences' statuses (one statement), only for runs at a step.
export async function runsWaiting<Row extends WaitingRow & { id: string; sequence_id: string }>(
  db: Database,
  rows: readonly Row[],
  now: Date,
  transaction?: Transaction,
): Promise<Map<string, RunWaiting>> {
  const atStep = rows.filter((row) => (row.status === 'pending' || row.status === 'running') && row.current_step_id !== null && row.version !== null);
  const result = new Map<string, RunWaiting>(rows.map((row) => [row.id, NOTHING]));
  if (atStep.length === 0) return result;
  const sequenceIds = [...new Set(atStep.map((row) => row.sequence_id))];
  const statuses = new Map(
    (await select<{ id: string; status: string }>(db, 'SELECT id, status FROM sequences WHERE id IN (?)', [sequenceIds], transaction)).map((row) => [row.id, row.status]),
  );
  const versions = await readVersions(db, atStep.map((row) => ({ sequenceId: row.sequence_id, version: Number(row.version) })), transaction);
  const sends = await waitingSends(db, atStep.filter((row) => row.due_at === null || row.due_at === undefined), transaction);
  for (const row of atStep) {
    const steps = versions.get(versionKey(row.sequence_id, Number(row.version)));
    const step = steps?.find((candidate) => candidate.id === row.current_step_id);
    result.set(row.id, runWaiting(row, step, statuses.get(row.sequence_id) ?? 'active', now, sends.get(`${row.id}/${Number(row.visit)}`)));
  }
  return result;
}

// The live sends of runs that wait with no due time of their own (one statement, through
// outbox_run_visit), by run and visit.
async function waitingSends(db: Database, rows: readonly (WaitingRow & { id: string; sequence_id: string })[], transaction?: Transaction): Promise<Map<string, WaitingSend>> {
  if (rows.length === 0) return new Map();
  const sends = await select<WaitingSend & { run_id: string; run_visit: number | string; account_id: string; channel: string; step_id: string }>(
    db,
    "SELECT run_id, run_visit, account_id, channel, step_id, status, attempt, due_at FROM outbox WHERE run_id IN (?) AND status IN ('queued', 'held', 'sending')",
    [rows.map((row) => row.id)],
    transaction,
  );
  // Whether their channels (or templates) are paused: one statement, for the message sends.
  const sequenceOf = new Map(rows.map((row) => [row.id, row.sequence_id]));
  const keyed = sends
    .filter((send) => send.channel === 'email' || send.channel === 'whatsapp')
    .map((send) => ({ accountId: send.account_id, channel: send.channel, sequenceId: sequenceOf.get(send.run_id) ?? '', stepId: send.step_id }));
  const paused = await pausedSteps(db, keyed, transaction);
  return new Map(
    sends.map((send) => [
      `${send.run_id}/${Number(send.run_visit)}`,
      { ...send, paused: paused.has(pausedStepKey({ accountId: send.account_id, channel: send.channel, sequenceId: sequenceOf.get(send.run_id) ?? '', stepId: send.step_id })) },
    ]),
  );
}
