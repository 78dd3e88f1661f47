import { randomUUID } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { execute, forUpdate, insertRows, select, skipLocked } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import type { MessageCategory } from '../../schemas/sequence-definition';
import { newRowId } from '../ids';
import { NOT_PAUSED_SQL, pausedChannels } from '../channels/channel-pauses';
import { cancelMessagesOfCancelledSends, markCancelled, markRetrying } from '../messages/message-store';

// The outbox table as a queue (db/migrations/20261212000000-create-outbox.js): the sends a step
// queues with its begin, the dispatchers' claim, and what pause, end and move do to a run's
// sends. The dispatcher (dispatcher.ts) and the record of outcomes (record-outcomes.ts) call
// these and hold no claim SQL of their own.
//
// Locks, in the one order (docs/architecture.md "One lock order"): contact, run, then its
// outbox rows. Every writer that stops a run's sends (pause, an end, a move) locks the run
// first and its rows after it. The claim locks outbox rows only (SKIP LOCKED, never waiting)
// and reads their runs without a lock: a pause that holds a row makes the claim pass over it;
// a pause that comes while a claim holds the row waits for that claim to commit, and finds the
// row `sending` (the request was under way before the pause was answered).

export type SendStatus = 'queued' | 'sending' | 'held' | 'succeeded' | 'failed' | 'cancelled';

// A send that may still go out: what pause holds, and ends and moves cancel.
export const LIVE_SEND = "('queued', 'held', 'sending')";

export interface SendToQueue {
  run: { id: string; accountId: string; visit: number };
  stepId: string;
  channel: string;
  target: string;
  // What is sent and its id, made once the step's visit number is known.
  compose: (stepVisit: number) => { idempotencyId: string; body: string };
  // A message step's: the message row written with the send (messages/message-store.ts).
  message?: { contactId: string; sequenceId: string; to: string; category?: MessageCategory };
}

// Queues the sends of steps that begin, in the transaction that begins them (the runs are
// locked). Idempotent per visit: a run that begins the same visit again (resumed, woken, moved
// with its send kept) finds its send and queues nothing new; a held one is queued again, at its
// own time if that is later (a retry keeps its schedule). Answers how many became due now,
// and the rows written now (a message step writes its message row beside its own).
export interface QueuedSend {
  outboxId: string;
  send: SendToQueue;
  stepVisit: number;
  idempotencyId: string;
}

export async function queueSends(
  db: Database,
  sends: readonly SendToQueue[],
  now: Date,
  transaction: Transaction,
): Promise<{ due: number; written: QueuedSend[] }> {
  if (sends.length === 0) return { due: 0, written: [] };
  const existing = await select<{ id: string; run_id: string; run_visit: number | string; step_id: string; status: SendStatus }>(
    db,
    'SELECT id, run_id, run_visit, step_id, status FROM outbox WHERE run_id IN (?)',
    [[...new Set(sends.map((send) => send.run.id))]],
    transaction,
  );
  const requeue: string[] = [];
  const rows: unknown[][] = [];
  const written: QueuedSend[] = [];
  for (const send of sends) {
    const ofRun = existing.filter((row) => row.run_id === send.run.id);
    const current = ofRun.find((row) => Number(row.run_visit) === send.run.visit);
    if (current) {
      // Held (the run was paused, or its sequence): queued again. Cancelled while its run is
      // at its visit should not happen (a claim cancels a send only for a run that ended or
      // moved on); if it does, the run would wait for nothing: queued again, with its id.
      if (current.status === 'held' || current.status === 'cancelled') requeue.push(current.id);
      continue;
    }
    // The how-many-th time this run begins this step: 1 the first time, 2 after a branch back.
    const stepVisit = ofRun.filter((row) => row.step_id === send.stepId).length + 1;
    const { idempotencyId, body } = send.compose(stepVisit);
    const outboxId = newRowId();
    written.push({ outboxId, send, stepVisit, idempotencyId });
    rows.push([
      outboxId, send.run.accountId, send.run.id, send.run.visit, send.stepId, stepVisit, send.channel, send.target.toLowerCase(),
      idempotencyId, body, 'queued', 0, now, now, now,
    ]);
  }
  await insertRows(
    db,
    'outbox',
    ['id', 'account_id', 'run_id', 'run_visit', 'step_id', 'step_visit', 'channel', 'target', 'idempotency_id', 'body', 'status', 'attempt', 'due_at', 'created_at', 'updated_at'],
    rows,
    transaction,
  );
  if (requeue.length > 0) {
    await execute(
      db,
      "UPDATE outbox SET status = 'queued', due_at = CASE WHEN due_at > ? THEN due_at ELSE ? END, updated_at = ? WHERE id IN (?) AND status IN ('held', 'cancelled')",
      [now, now, now, requeue],
      transaction,
    );
  }
  return { due: rows.length + requeue.length, written };
}

// A paused run's sends that have not started wait for its resume (the engine's begin queues
// them again); one under way finishes, and is recorded.
export async function holdSends(db: Database, runIds: readonly string[], now: Date, transaction: Transaction): Promise<void> {
  if (runIds.length === 0) return;
  await execute(db, "UPDATE outbox SET status = 'held', updated_at = ? WHERE run_id IN (?) AND status = 'queued'", [now, runIds], transaction);
}

// Ended runs' sends that have not started never will. One under way may finish: its outcome is
// recorded against a run that has ended (record-outcomes.ts).
export async function cancelSends(db: Database, runIds: readonly string[], now: Date, transaction: Transaction): Promise<void> {
  if (runIds.length === 0) return;
  await execute(
    db,
    "UPDATE outbox SET status = 'cancelled', due_at = NULL, updated_at = ? WHERE run_id IN (?) AND status IN ('queued', 'held')",
    [now, runIds],
    transaction,
  );
  // Their messages were never sent: cancelled with them.
  await cancelMessagesOfCancelledSends(db, runIds, 'the run ended before it was sent', now, transaction);
}

// Each (account, channel, target) with queued sends, and the earliest due one; and the earliest
// lease end of sends under way (a dispatcher that died leaves them to be taken again). Through
// outbox_due, one range per group (a loose index scan on MariaDB): the cost is the groups',
// whatever the length of their queues.
export interface SendGroup {
  accountId: string;
  channel: string;
  target: string;
  dueAt: Date;
}

export async function sendGroups(db: Database): Promise<{ queued: SendGroup[]; leaseEnds: Date | null }> {
  const rows = await select<{ status: SendStatus; account_id: string; channel: string; target: string; due_at: unknown }>(
    db,
    `SELECT status, account_id, channel, target, MIN(due_at) AS due_at FROM outbox WHERE status IN ('queued', 'sending')
     GROUP BY status, account_id, channel, target`,
    [],
  );
  let leaseEnds: number | null = null;
  const queued: SendGroup[] = [];
  // A channel paused as a whole has nothing to claim: its groups are left out of the look.
  const paused = rows.some((row) => row.status === 'queued') ? await pausedChannels(db) : new Set<string>();
  for (const row of rows) {
    if (row.due_at === null || row.due_at === undefined) continue;
    const dueAt = toDate(row.due_at);
    if (row.status === 'sending') leaseEnds = Math.min(leaseEnds ?? Infinity, dueAt.getTime());
    else if (!paused.has(`${row.account_id} ${row.channel}`)) queued.push({ accountId: row.account_id, channel: row.channel, target: row.target, dueAt });
  }
  return { queued, leaseEnds: leaseEnds === null ? null : new Date(leaseEnds) };
}

export interface ClaimedSend {
  id: string;
  token: string;
  accountId: string;
  runId: string;
  runVisit: number;
  stepId: string;
  channel: string;
  target: string;
  idempotencyId: string;
  body: string | null;
  // Failed attempts before this one.
  attempt: number;
  // When this attempt's request began (the claim), or, for one interrupted, when it had.
  startedAt: Date;
}

export interface SendClaim {
  token: string;
  // To send now.
  sending: ClaimedSend[];
  // Left `sending` by a dispatcher that died (their lease ended): to record as interrupted.
  interrupted: ClaimedSend[];
  // Claimed and then set aside, their run paused or its sequence not active, or cancelled,
  // their run ended or gone from their step: nothing sent.
  held: number;
  cancelled: number;
}

// Claims, in one transaction: up to `limit` due sends of each group picked (the fair share the
// dispatcher chose), and the sends whose lease ended. Each claimed send's run is read again
// here (no lock: see the top of this file): only a send whose run is still `running` at the
// send's visit, in an active sequence, is sent.
export async function claimSends(
  db: Database,
  now: Date,
  picks: ReadonlyArray<{ group: SendGroup; limit: number }>,
  // leaseMs: per channel where one's sends can take longer (an email's reply to its final dot).
  options: { leaseMs: number | ((channel: string) => number); takeInterrupted: boolean },
): Promise<SendClaim> {
  const token = randomUUID();
  const leaseOf = typeof options.leaseMs === 'number' ? () => options.leaseMs as number : options.leaseMs;
  const leaseEnd = (channel: string) => new Date(now.getTime() + leaseOf(channel));
  return withTransaction(db, async (transaction) => {
    const interruptedIds = options.takeInterrupted
      ? (await select<{ id: string }>(db, `SELECT id FROM outbox WHERE status = 'sending' AND due_at <= ? LIMIT 100${skipLocked(db)}`, [now], transaction)).map((row) => row.id)
      : [];
    const queuedIds: string[] = [];
    for (const { group, limit } of picks) {
      // A paused channel's (or step template's) sends are passed over: they stay queued until
      // the resume (channels/channel-pauses.ts).
      const rows = await select<{ id: string }>(
        db,
        `SELECT o.id FROM outbox o WHERE o.status = 'queued' AND o.account_id = ? AND o.channel = ? AND o.target = ? AND o.due_at <= ?
         AND ${NOT_PAUSED_SQL}
         ORDER BY o.due_at LIMIT ${Math.max(1, Math.floor(limit))}${skipLocked(db)}`,
        [group.accountId, group.channel, group.target, now],
        transaction,
      );
      queuedIds.push(...rows.map((row) => row.id));
    }
    const ids = [...interruptedIds, ...queuedIds];
    if (ids.length === 0) return { token, sending: [], interrupted: [], held: 0, cancelled: 0 };
    const rows = await select<{
      id: string;
      account_id: string;
      run_id: string;
      run_visit: number | string;
      step_id: string;
      channel: string;
      target: string;
      idempotency_id: string;
      body: string | null;
      attempt: number | string;
      started_at: unknown;
      run_status: string | null;
      visit: number | string | null;
      sequence_status: string | null;
    }>(
      db,
      `SELECT o.id, o.account_id, o.run_id, o.run_visit, o.step_id, o.channel, o.target, o.idempotency_id, o.body, o.attempt, o.started_at,
              r.status AS run_status, r.visit, s.status AS sequence_status
       FROM outbox o LEFT JOIN sequence_runs r ON r.id = o.run_id LEFT JOIN sequences s ON s.id = r.sequence_id
       WHERE o.id IN (?)`,
      [ids],
      transaction,
    );
    const interruptedSet = new Set(interruptedIds);
    const send: string[] = [];
    const hold: string[] = [];
    const cancel: string[] = [];
    for (const row of rows) {
      if (interruptedSet.has(row.id)) continue;
      const atStep = row.visit !== null && Number(row.visit) === Number(row.run_visit);
      if (atStep && row.run_status === 'running' && row.sequence_status === 'active') send.push(row.id);
      else if (atStep && (row.run_status === 'paused' || row.run_status === 'running')) hold.push(row.id);
      else cancel.push(row.id);
    }
    // One statement per channel's lease (a handful whatever the batch).
    const channelOf = new Map(rows.map((row) => [row.id, row.channel]));
    for (const [channel, ids] of byChannel(send, channelOf)) {
      await execute(
        db,
        "UPDATE outbox SET status = 'sending', claim_token = ?, due_at = ?, started_at = ?, updated_at = ? WHERE id IN (?)",
        [token, leaseEnd(channel), now, now, ids],
        transaction,
      );
    }
    for (const [channel, ids] of byChannel(interruptedIds, channelOf)) {
      await execute(db, 'UPDATE outbox SET claim_token = ?, due_at = ?, updated_at = ? WHERE id IN (?)', [token, leaseEnd(channel), now, ids], transaction);
    }
    if (hold.length > 0) await execute(db, "UPDATE outbox SET status = 'held', updated_at = ? WHERE id IN (?)", [now, hold], transaction);
    if (cancel.length > 0) {
      await execute(db, "UPDATE outbox SET status = 'cancelled', due_at = NULL, updated_at = ? WHERE id IN (?)", [now, cancel], transaction);
      const runIds = [...new Set(rows.filter((row) => cancel.includes(row.id)).map((row) => row.run_id))];
      await cancelMessagesOfCancelledSends(db, runIds, 'the run ended or left the step before it was sent', now, transaction);
    }
    const claimed = (row: (typeof rows)[number], startedAt: Date): ClaimedSend => ({
      id: row.id,
      token,
      accountId: row.account_id,
      runId: row.run_id,
      runVisit: Number(row.run_visit),
      stepId: row.step_id,
      channel: row.channel,
      target: row.target,
      idempotencyId: row.idempotency_id,
      body: row.body,
      attempt: Number(row.attempt),
      startedAt,
    });
    const sendSet = new Set(send);
    return {
      token,
      sending: rows.filter((row) => sendSet.has(row.id)).map((row) => claimed(row, now)),
      interrupted: rows.filter((row) => interruptedSet.has(row.id)).map((row) => claimed(row, row.started_at ? toDate(row.started_at) : now)),
      held: hold.length,
      cancelled: cancel.length,
    };
  });
}

// Sends claimed ahead (Channel.claimAhead) that waited in the dispatcher and are about to begin,
// read again in one statement for the batch (the outbox rows by id, their runs and sequences):
// an answer that came while they waited (a pause, an unenroll, a move) came before their
// request, so they must not begin (docs/sequences.md "What was answered holds"). `begin`: still
// this claim's and its run still wants it, as the claim decides; `setAside`: its run no longer
// does (setAsideUnbegun); `gone`: no longer this claim's (its holder decides).
export type Recheck = 'begin' | 'setAside' | 'gone';

export async function recheckClaimed(db: Database, sends: readonly ClaimedSend[]): Promise<Map<string, Recheck>> {
  const verdicts = new Map<string, Recheck>();
  if (sends.length === 0) return verdicts;
  const rows = await select<{ id: string; status: SendStatus; claim_token: string | null; run_visit: number | string; run_status: string | null; visit: number | string | null; sequence_status: string | null }>(
    db,
    `SELECT o.id, o.status, o.claim_token, o.run_visit, r.status AS run_status, r.visit, s.status AS sequence_status
     FROM outbox o LEFT JOIN sequence_runs r ON r.id = o.run_id LEFT JOIN sequences s ON s.id = r.sequence_id
     WHERE o.id IN (?)`,
    [sends.map((send) => send.id)],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const send of sends) {
    const row = byId.get(send.id);
    if (!row || row.status !== 'sending' || row.claim_token !== send.token) verdicts.set(send.id, 'gone');
    else verdicts.set(send.id, wants(row) ? 'begin' : 'setAside');
  }
  return verdicts;
}

// The sends recheckClaimed set aside, decided again under their runs' locks (the lock order:
// runs, then their outbox rows) so a resume that came meanwhile is not lost: held, due now,
// when the run is paused at the send's visit (or its sequence is not active), its message back
// to `queued` (the resume's begin queues it again: sent with the same id); cancelled when the
// run ended or moved on, its message `cancelled` (no server was given it). Answers those whose
// run wants them after all (resumed meanwhile): to begin.
export async function setAsideUnbegun(db: Database, sends: readonly ClaimedSend[], now: Date): Promise<ClaimedSend[]> {
  if (sends.length === 0) return [];
  return withTransaction(db, async (transaction) => {
    const runs = new Map(
      (
        await select<{ id: string; status: string; visit: number | string; sequence_id: string }>(
          db,
          `SELECT id, status, visit, sequence_id FROM sequence_runs WHERE id IN (?)${forUpdate(db)}`,
          [[...new Set(sends.map((send) => send.runId))]],
          transaction,
        )
      ).map((row) => [row.id, row]),
    );
    const sequences = runs.size > 0
      ? new Map((await select<{ id: string; status: string }>(db, 'SELECT id, status FROM sequences WHERE id IN (?)', [[...new Set([...runs.values()].map((run) => run.sequence_id))]], transaction)).map((row) => [row.id, row.status]))
      : new Map<string, string>();
    const held = new Map(
      (await select<{ id: string; status: SendStatus; claim_token: string | null }>(db, `SELECT id, status, claim_token FROM outbox WHERE id IN (?)${forUpdate(db)}`, [sends.map((send) => send.id)], transaction)).map((row) => [row.id, row]),
    );
    const begin: ClaimedSend[] = [];
    const hold: string[] = [];
    const cancel: string[] = [];
    for (const send of sends) {
      const row = held.get(send.id);
      if (!row || row.status !== 'sending' || row.claim_token !== send.token) continue;
      const run = runs.get(send.runId);
      const state = { run_visit: send.runVisit, run_status: run?.status ?? null, visit: run?.visit ?? null, sequence_status: run ? (sequences.get(run.sequence_id) ?? null) : null };
      const atStep = state.visit !== null && Number(state.visit) === send.runVisit;
      if (wants(state)) begin.push(send);
      else if (atStep && (state.run_status === 'paused' || state.run_status === 'running')) hold.push(send.id);
      else cancel.push(send.id);
    }
    if (hold.length > 0) {
      await execute(db, "UPDATE outbox SET status = 'held', claim_token = NULL, started_at = NULL, due_at = ?, updated_at = ? WHERE id IN (?)", [now, now, hold], transaction);
    }
    if (cancel.length > 0) {
      await execute(db, "UPDATE outbox SET status = 'cancelled', claim_token = NULL, started_at = NULL, due_at = NULL, updated_at = ? WHERE id IN (?)", [now, cancel], transaction);
    }
    const setAside = [...hold, ...cancel];
    if (setAside.length > 0) {
      // A message step's message, written `sending` by its channel's load before the send waited.
      const messages = await select<{ id: string; outbox_id: string }>(db, "SELECT id, outbox_id FROM messages WHERE outbox_id IN (?) AND status IN ('queued', 'sending')", [setAside], transaction);
      const held = new Set(hold);
      await markRetrying(db, messages.filter((m) => held.has(m.outbox_id)).map((m) => ({ id: m.id, error: 'the run was paused before it was sent' })), { now }, transaction);
      const cancelled = messages.filter((m) => !held.has(m.outbox_id)).map((m) => ({ id: m.id, reason: 'the run ended or left the step before it was sent' }));
      if (cancelled.length > 0) await markCancelled(db, cancelled, { now }, transaction);
    }
    return begin;
  });
}

// What the claim sends: a run still at the send's visit, running, in an active sequence.
function wants(row: { run_visit: number | string; run_status: string | null; visit: number | string | null; sequence_status: string | null }): boolean {
  return row.visit !== null && Number(row.visit) === Number(row.run_visit) && row.run_status === 'running' && row.sequence_status === 'active';
}

function byChannel(ids: readonly string[], channelOf: ReadonlyMap<string, string>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const channel = channelOf.get(id) ?? '';
    groups.set(channel, [...(groups.get(channel) ?? []), id]);
  }
  return groups;
}
