import type { Transaction } from 'sequelize';
import type { Database } from '../../../db/database';
import { execute, forUpdate, insertRows, select } from '../../../db/sql/statements';
import { withTransaction } from '../../../db/sql/transaction';
import type { NewEventOf } from '../../../schemas/event';
import type { ExecutionDto } from '../../../schemas/sequence';
import type { Step } from '../../../schemas/sequence-definition';
import { recordEvents } from '../../events/record-events';
import { runStatusChangedEvent } from '../../events/run-events';
import { newRowId } from '../../ids';
import { countRunMoves, type RunMove } from '../../run-status/run-status-counts';
import { countRunProgress, type RunProgress } from '../../analytics/progress-counters';
import { progressOfChange } from '../../analytics/run-change-progress';
import { readVersions, versionKey } from '../../runs/sequence-versions';
import type { MessageTransition } from '../../messages/message-events';
import { applyStatusChanges, markRetrying, type StatusChange, type StoreOptions } from '../../messages/message-store';
import { pauseChannels, type NewPause } from '../../channels/channel-pauses';
import { addSuppressions, normalizeSuppressionAddress, type NewSuppression } from '../../suppressions/suppression-store';
import {
  failureCodeOf,
  OPTED_OUT_CODE,
  recordWhatsAppRecipientFailures,
  UNDELIVERABLE_CODE,
  type WhatsAppRecipientFailure,
} from '../../messages/whatsapp-recipient-failures';
import { softBounceSuppressions } from '../../suppressions/soft-bounces';
import type { SendBounce } from '../../signals/send-bounces';
import { retryDelayMs } from '../../webhooks/retry-schedule';
import type { MessageChannel } from '../../../schemas/message';
import { byAccount } from '../run-queue';
import { changesRun, clip, isActiveStatus, nextRunState, runChangeSql, type RunChange, type RunInput } from '../../runs/run-state';
import type { StepCount } from '../step-counts';
import type { SendResult } from './channels/channel';
import { changedRunDto, factsOf, lockRunsWithContacts, type LockedRun } from './locked-runs';
import type { ClaimedSend, SendStatus } from '../../runs/outbox';

// The record of outbound outcomes, each as it arrives (the dispatcher hands them here one by
// one; those that arrive while a record is being written go together in the next): one
// transaction sets each send's final state (or its next attempt) and moves its run on, through
// the run's state machine (run-state.ts). Only a send this dispatcher still holds is written
// (its claim_token): one whose lease ran out and went to another dispatcher is left as that
// one leaves it.
//
// - 2xx: the step succeeded; the run goes on to its next step (due now) or completes.
// - A failure: the attempt is recorded failed with run.step_failed; the send is queued again
//   after 5 s, 30 s, 2 min, 10 min, 1 h (±10 %), held instead if its run is paused; the sixth
//   failure, or one no retry can mend, fails the step and the run.
// - Interrupted (a dispatcher died between its request and its record; its lease ended): a
//   failed attempt like any other, retried at once, with the same id.
// - Abandoned (this process stopping cut the request short): not an attempt; queued again at
//   once, with the same id. Nothing else is written.
// - Unknown (an email whose final dot was written and no reply came: a timeout, a lost
//   connection, a stop; the relay may have it): the first is a failed attempt like any other,
//   retried on the schedule with the same Message-ID; the second (or one with no attempt left)
//   is not sent again nor failed: the message is `unconfirmed`, the step's execution
//   `succeeded` with the reason, and the run goes on as after a 2xx. Counted on the send's row
//   (unknown_outcomes), read under its lock here.
// - Skipped (a message step's send that sent nothing: the contact unsubscribed, or has no
//   address the channel can use): the step's execution is `skipped` with the reason, and the
//   run goes on as after a 2xx.
// - A message step's message moves with its send, in this transaction: sent (or captured),
//   skipped, back to queued for a retry, failed when the step fails, cancelled when the run
//   left the step before anything was sent.
// - The run left the step while the request was on the wire (it ended, or moved on): the
//   attempt is recorded `skipped` with what the receiver answered, and the run is left alone.
//
// Each attempt's execution row is written here, with its own request's start and end.

export const MAX_SEND_ATTEMPTS = 6;
export const INTERRUPTED = 'interrupted: the dispatcher stopped before it recorded the answer';

export type Outcome =
  | { kind: 'answered'; send: ClaimedSend; result: SendResult; startedAt: Date; finishedAt: Date }
  | { kind: 'interrupted'; send: ClaimedSend };

export interface Recorded {
  counts: StepCount[];
  // A run became due now (its next step): the engine should look.
  due: boolean;
  // Sends queued again (a retry, an interrupted or abandoned attempt).
  requeued: number;
  // Each status a message step's message reached (sent, captured, skipped, failed, cancelled),
  // for messages_total once the record has committed.
  messages: Array<{ channel: string; outcome: string }>;
  // Channels (or templates) this record paused, for channel_pauses_total.
  paused: Array<{ channel: string; code: string }>;
  // WhatsApp numbers Graph's answer to a send opted out (131050) or found invalid (131026 in a
  // row), for whatsapp_opt_outs_total{source="send"} and whatsapp_numbers_invalid_total.
  whatsapp: { optedOut: number; invalid: number };
  // Emails the recipient's server refused for good at the send (a hard bounce), for their
  // `email.bounced` activities once this record has committed (signals/send-bounces.ts).
  bounced: SendBounce[];
}

export async function recordOutcomes(
  db: Database,
  outcomes: readonly Outcome[],
  options: { now: Date; random?: () => number },
): Promise<Recorded> {
  const abandoned = outcomes.filter((outcome) => outcome.kind === 'answered' && outcome.result.abandoned).map((outcome) => outcome.send);
  await handBack(db, abandoned, options.now);
  const recorded = outcomes.filter((outcome) => !(outcome.kind === 'answered' && outcome.result.abandoned));
  if (recorded.length === 0) return { counts: [], due: false, requeued: abandoned.length, messages: [], paused: [], whatsapp: { optedOut: 0, invalid: 0 }, bounced: [] };
  return withTransaction(db, async (transaction) => {
    const runs = await lockRunsWithContacts(db, [...new Set(recorded.map((outcome) => outcome.send.runId))], transaction);
    const held = await lockSends(db, recorded.map((outcome) => outcome.send.id), transaction);
    const mine = recorded.filter(({ send }) => {
      const row = held.get(send.id);
      return row !== undefined && row.claim_token === send.token && row.status === 'sending';
    });
    const versions = await readVersions(
      db,
      [...runs.values()].filter((run) => run.version !== null).map((run) => ({ sequenceId: run.sequence_id, version: Number(run.version) })),
      transaction,
    );
    const writes = new OutcomeWrites(options.now, options.random);
    for (const outcome of mine) {
      const run = runs.get(outcome.send.runId);
      const steps = run && run.version !== null ? versions.get(versionKey(run.sequence_id, Number(run.version))) : undefined;
      const row = held.get(outcome.send.id)!;
      writes.add(outcome, row.attempt, run, steps ?? [], row.unknown_outcomes);
    }
    await writes.write(db, transaction);
    // The counters of runs by status (run-status-counts.ts), from the statuses read under the
    // runs' locks.
    countRunMoves(db, transaction, writes.moves);
    countRunProgress(db, transaction, options.now, writes.progress);
    const requeued = [...writes.sendUpdates()].filter((update) => update.status === 'queued').length;
    return { counts: writes.counts, due: writes.due, requeued: requeued + abandoned.length, messages: writes.messageOutcomes, paused: writes.paused, whatsapp: writes.whatsapp, bounced: writes.bounced };
  });
}

// This process is stopping: the request it cut short goes back, due now, for another
// dispatcher (or this one restarted) to send again with the same id.
async function handBack(db: Database, sends: readonly ClaimedSend[], now: Date): Promise<void> {
  if (sends.length === 0) return;
  for (const [token, list] of groupBy(sends, (send) => send.token)) {
    await execute(
      db,
      "UPDATE outbox SET status = 'queued', due_at = ?, claim_token = NULL, started_at = NULL, updated_at = ? WHERE id IN (?) AND claim_token = ? AND status = 'sending'",
      [now, now, list.map((send) => send.id), token],
    );
  }
}

async function lockSends(db: Database, ids: readonly string[], transaction: Transaction) {
  const rows = await select<{ id: string; claim_token: string | null; status: SendStatus; attempt: number | string; unknown_outcomes: number | string }>(
    db,
    `SELECT id, claim_token, status, attempt, unknown_outcomes FROM outbox WHERE id IN (?)${forUpdate(db)}`,
    [ids],
    transaction,
  );
  return new Map(rows.map((row) => [row.id, { ...row, attempt: Number(row.attempt), unknown_outcomes: Number(row.unknown_outcomes) }]));
}

interface SendUpdate {
  status: SendStatus;
  dueAt: Date | null;
  attempt: number;
  lastError: string | null;
  // Attempts whose outcome was unknown (an email after its final dot), this one included: set
  // by add() for every send it records.
  unknownOutcomes?: number;
}

// What the outcomes write, gathered, then sent set-based: one INSERT of executions, one UPDATE
// of the sends, one UPDATE per distinct change of runs, the events.
class OutcomeWrites {
  readonly counts: StepCount[] = [];
  due = false;
  private readonly executions: unknown[][] = [];
  private readonly sends = new Map<string, SendUpdate>();
  private readonly runChanges = new Map<string, { change: RunChange; ids: string[] }>();
  private readonly events: Array<{ accountId: string; event: NewEventOf }> = [];
  // The message steps' messages, moved with their outcomes.
  private readonly messages: Array<{ id: string; status: MessageMove; providerMessageId: string | null; error: string | null; at: Date }> = [];
  readonly moves: RunMove[] = [];
  // Each run's move, for the analytics counters (analytics/progress-counters.ts).
  readonly progress: RunProgress[] = [];

  readonly messageOutcomes: Array<{ channel: string; outcome: string }> = [];
  // Channels (or steps' templates) to pause, and those this record paused (channel_pauses_total).
  private readonly pauses: Array<{ accountId: string } & NewPause> = [];
  readonly paused: Array<{ channel: string; code: string }> = [];
  whatsapp = { optedOut: 0, invalid: 0 };
  // Messages that failed soft-bouncing (soft-bounces.ts).
  private readonly softBounced: Array<{ accountId: string; contactId: string; address: string; messageId: string }> = [];
  // Addresses to suppress (hard bounces), with the contact whose message bounced.
  private readonly suppressions: Array<{ accountId: string; item: NewSuppression }> = [];
  readonly bounced: SendBounce[] = [];

  constructor(
    private readonly now: Date,
    private readonly random?: () => number,
  ) {}

  add(outcome: Outcome, failedBefore: number, run: LockedRun | undefined, steps: readonly Step[], unknownBefore = 0): void {
    const unknown = outcome.kind === 'answered' && outcome.result.unknownOutcome === true;
    this.addOutcome(outcome, failedBefore, run, steps, unknown && unknownBefore >= 1);
    const update = this.sends.get(outcome.send.id);
    if (update) update.unknownOutcomes = unknownBefore + (unknown ? 1 : 0);
  }

  // unconfirmed: an unknown outcome that is not sent again (record-outcomes' header).
  private addOutcome(outcome: Outcome, failedBefore: number, run: LockedRun | undefined, steps: readonly Step[], unconfirmed: boolean): void {
    const { send } = outcome;
    const attempt = failedBefore + 1;
    const answered = outcome.kind === 'answered' ? outcome : null;
    const reason = answered ? answered.result.reason : INTERRUPTED;
    const startedAt = answered ? answered.startedAt : send.startedAt;
    const finishedAt = answered ? answered.finishedAt : this.now;
    const detail = answered ? answered.result.detail : null;
    const ok = answered?.result.ok === true;

    // Not where the send left it: ended, moved on, or gone. The request's answer is kept in
    // the timeline; the run is not touched.
    if (!run || !isActiveStatus(run.status) || Number(run.visit) !== send.runVisit) {
      // The message is what happened to it: taken by the provider, or never sent.
      if (ok) this.messageChange(answered, { status: answered?.result.message?.captured ? 'captured' : 'sent' });
      else if (answered?.result.unknownOutcome) this.messageChange(answered, { status: 'unconfirmed', error: reason });
      else this.messageChange(answered, { status: 'cancelled', error: reason });
      this.sends.set(send.id, { status: ok ? 'succeeded' : 'cancelled', dueAt: null, attempt: ok || !answered ? failedBefore : attempt, lastError: ok ? null : reason });
      if (run && answered) {
        const left = isActiveStatus(run.status) ? 'had moved on' : `was ${run.status}`;
        this.execution(run, send.runVisit, attempt, send.stepId, send.channel, 'skipped', `the run ${left} when the receiver answered: ${ok ? 'succeeded' : reason}`, detail, startedAt, finishedAt);
      }
      return;
    }

    const stepId = run.current_step_id ?? send.stepId;
    const type = steps.find((step) => step.id === stepId)?.type ?? send.channel;
    const skipped = answered?.result.skipped;
    if (skipped) {
      // Nothing sent (the contact unsubscribed, or has no address the channel can use): the step
      // is skipped with its reason, and the run goes on as after a success.
      this.counts.push({ type, outcome: 'skipped' });
      this.sends.set(send.id, { status: 'succeeded', dueAt: null, attempt: failedBefore, lastError: skipped });
      this.messageChange(answered, { status: 'skipped', error: skipped });
      const index = steps.findIndex((step) => step.id === stepId);
      const next = index >= 0 ? (steps[index + 1]?.id ?? null) : null;
      const change = this.move(run, { kind: 'succeeded', next }, { outcome: 'skipped', reason: skipped });
      const execution = this.execution(run, send.runVisit, attempt, stepId, type, 'skipped', skipped, detail, startedAt, finishedAt);
      this.event(run, { type: 'run.step_completed', data: { run: changedRunDto(run, change), step: { id: stepId, type }, execution } });
      this.statusEvent(run, change);
      return;
    }
    if (ok) {
      this.messageChange(answered, { status: answered?.result.message?.captured ? 'captured' : 'sent' });
      this.counts.push({ type, outcome: 'succeeded' });
      this.sends.set(send.id, { status: 'succeeded', dueAt: null, attempt: failedBefore, lastError: null });
      const index = steps.findIndex((step) => step.id === stepId);
      const next = index >= 0 ? (steps[index + 1]?.id ?? null) : null;
      const change = this.move(run, { kind: 'succeeded', next });
      const execution = this.execution(run, send.runVisit, attempt, stepId, type, 'succeeded', null, detail, startedAt, finishedAt);
      this.event(run, { type: 'run.step_completed', data: { run: changedRunDto(run, change), step: { id: stepId, type }, execution } });
      this.statusEvent(run, change);
      return;
    }

    const lastAttempt = attempt >= MAX_SEND_ATTEMPTS;
    if (answered?.result.unknownOutcome && (unconfirmed || lastAttempt)) {
      // The relay may have it: neither sent again nor failed; the run goes on as after a 2xx.
      const why = `unconfirmed: ${reason}`;
      this.messageChange(answered, { status: 'unconfirmed', error: why });
      this.counts.push({ type, outcome: 'succeeded' });
      this.sends.set(send.id, { status: 'succeeded', dueAt: null, attempt, lastError: why });
      const index = steps.findIndex((step) => step.id === stepId);
      const next = index >= 0 ? (steps[index + 1]?.id ?? null) : null;
      const change = this.move(run, { kind: 'succeeded', next });
      const execution = this.execution(run, send.runVisit, attempt, stepId, type, 'succeeded', why, { ...detail, outcome: 'unconfirmed' }, startedAt, finishedAt);
      this.event(run, { type: 'run.step_completed', data: { run: changedRunDto(run, change), step: { id: stepId, type }, execution } });
      this.statusEvent(run, change);
      return;
    }

    // The sender's failure (a refused login, an expired token, a template Graph refuses; a relay
    // still unreachable when the schedule is spent): the channel, or the step's template,
    // pauses. Nothing is recorded against the contact or the run: no attempt is counted, the
    // send and its message go back to `queued` and wait for the resume.
    const failure = answered?.result.failure;
    if (failure && (failure.kind === 'sender' || (failure.senderWhenExhausted && attempt >= MAX_SEND_ATTEMPTS))) {
      this.sends.set(send.id, { status: run.status === 'paused' ? 'held' : 'queued', dueAt: this.now, attempt: failedBefore, lastError: reason });
      this.messageChange(answered, { status: 'retry', error: `paused: ${reason}` });
      const step = failure.scope === 'template' ? { sequenceId: run.sequence_id, stepId } : null;
      this.pauses.push({ accountId: run.account_id, channel: send.channel as MessageChannel, step, code: failure.code, reason: reason ?? failure.reason });
      return;
    }

    this.counts.push({ type, outcome: 'failed' });
    const final = (answered?.result.final ?? false) || lastAttempt;
    const execution = this.execution(run, send.runVisit, attempt, stepId, type, 'failed', reason, detail, startedAt, finishedAt);
    if (final) {
      // A hard bounce (the recipient's server refused the address for good): the message
      // `bounced`, and its address suppressed, in this transaction (write()).
      if (failure?.kind === 'hard_bounce' && answered?.result.message) {
        this.messageChange(answered, { status: 'bounced', error: reason });
        const address = normalizeSuppressionAddress(send.channel as MessageChannel, failure.address);
        if (address) this.suppressions.push({ accountId: run.account_id, item: { channel: send.channel as MessageChannel, address, reason: 'hard_bounce', source: `message:${answered.result.message.id}`, contactId: run.contact_id } });
        if (send.channel === 'email') {
          this.bounced.push({ accountId: run.account_id, contactId: run.contact_id, messageId: answered.result.message.id, runId: run.id, sequenceId: run.sequence_id, stepId, detail: reason });
        }
      } else {
        this.messageChange(answered, { status: 'failed', error: reason });
        // A soft bounce to the end of the schedule: counted towards the address's streak.
        if (failure?.code === 'soft_bounce' && send.channel === 'email' && answered?.result.message) {
          this.softBounced.push({ accountId: run.account_id, contactId: run.contact_id, address: failure.address, messageId: answered.result.message.id });
        }
      }
      this.sends.set(send.id, { status: 'failed', dueAt: null, attempt, lastError: reason });
      const change = this.move(run, { kind: 'failed', reason: `step "${stepId}": ${reason}` });
      this.event(run, { type: 'run.step_failed', data: { run: changedRunDto(run, change), step: { id: stepId, type }, execution, retryAt: null } });
      this.statusEvent(run, change);
      return;
    }
    // An interrupted attempt is tried again at once; a failed one after the schedule's wait.
    const retryAt = answered ? new Date(finishedAt.getTime() + retryDelayMs(attempt, this.random)) : this.now;
    this.messageChange(answered, { status: 'retry', error: reason });
    this.sends.set(send.id, { status: run.status === 'paused' ? 'held' : 'queued', dueAt: retryAt, attempt, lastError: reason });
    const change = this.move(run, { kind: 'retrying' });
    this.event(run, { type: 'run.step_failed', data: { run: changedRunDto(run, change), step: { id: stepId, type }, execution, retryAt: retryAt.toISOString() } });
  }

  private messageChange(answered: Extract<Outcome, { kind: 'answered' }> | null, change: { status: MessageMove; error?: string | null }): void {
    const message = answered?.result.message;
    if (!message) return;
    this.messages.push({ id: message.id, status: change.status, providerMessageId: message.providerMessageId ?? null, error: change.error ?? null, at: answered.finishedAt });
  }

  sendUpdates(): IterableIterator<SendUpdate> {
    return this.sends.values();
  }

  // left: how the run left its step when the input does not say (a message skipped for its contact).
  private move(run: LockedRun, input: RunInput, left?: RunProgress['left']): RunChange {
    const change = nextRunState(factsOf(run), input, this.now);
    if (!changesRun(change)) return change;
    this.progress.push(progressOfChange(run.sequence_id, run.current_step_id, input, change, left));
    if (change.set.status !== undefined) this.moves.push({ sequenceId: run.sequence_id, from: run.status, to: change.set.status });
    if (change.set.dueAt && change.set.dueAt <= this.now) this.due = true;
    const key = JSON.stringify([change.set, change.keepClaim]);
    const group = this.runChanges.get(key);
    if (group) group.ids.push(run.id);
    else this.runChanges.set(key, { change, ids: [run.id] });
    return change;
  }

  private execution(
    run: LockedRun,
    visit: number,
    attempt: number,
    stepId: string,
    type: string,
    status: ExecutionDto['status'],
    reason: string | null,
    detail: Record<string, unknown> | null,
    startedAt: Date,
    finishedAt: Date,
  ): ExecutionDto {
    this.executions.push([
      newRowId(), run.account_id, run.id, visit, attempt, stepId, type, status, clip(reason), detail ? JSON.stringify(detail) : null, startedAt, finishedAt,
    ]);
    return { stepId, type, attempt, status, reason: clip(reason), detail, startedAt: startedAt.toISOString(), finishedAt: finishedAt.toISOString() };
  }

  private event(run: LockedRun, event: NewEventOf): void {
    this.events.push({ accountId: run.account_id, event });
  }

  private statusEvent(run: LockedRun, change: RunChange): void {
    if (change.to === change.from) return;
    this.event(run, runStatusChangedEvent(changedRunDto(run, change), run.sequence_id, run.contact_id, change.from));
  }

  async write(db: Database, transaction: Transaction): Promise<void> {
    await insertRows(
      db,
      'run_step_executions',
      ['id', 'account_id', 'run_id', 'visit', 'attempt', 'step_id', 'type', 'status', 'reason', 'detail', 'started_at', 'finished_at'],
      this.executions,
      transaction,
    );
    if (this.sends.size > 0) {
      // Each send's own values, in one statement: a retry's time differs from send to send.
      const ids = [...this.sends.keys()];
      const column = (pick: (update: SendUpdate) => unknown) => ({
        sql: `CASE id ${ids.map(() => 'WHEN ? THEN ?').join(' ')} END`,
        values: ids.flatMap((id) => [id, pick(this.sends.get(id)!)]),
      });
      const status = column((update) => update.status);
      const dueAt = column((update) => update.dueAt);
      const attempt = column((update) => update.attempt);
      const lastError = column((update) => (update.lastError === null ? null : clip(update.lastError)));
      const unknownOutcomes = column((update) => update.unknownOutcomes ?? 0);
      await execute(
        db,
        `UPDATE outbox SET status = ${status.sql}, due_at = ${dueAt.sql}, attempt = ${attempt.sql}, last_error = ${lastError.sql},
           unknown_outcomes = ${unknownOutcomes.sql}, claim_token = NULL, updated_at = ? WHERE id IN (?)`,
        [...status.values, ...dueAt.values, ...attempt.values, ...lastError.values, ...unknownOutcomes.values, this.now, ids],
        transaction,
      );
    }
    for (const { change, ids } of this.runChanges.values()) {
      const { set, values } = runChangeSql(change, this.now);
      await execute(db, `UPDATE sequence_runs SET ${set} WHERE id IN (?)`, [...values, ids], transaction);
    }
    // The messages after the runs (the one lock order: contacts, runs, outbox rows, messages);
    // their events (message.sent, .failed) recorded with the runs', one counter lock per account.
    const messageEvents = new Map<string, NewEventOf[]>();
    const recipientFailures: WhatsAppRecipientFailure[] = [];
    for (const { after, reached } of await writeMessageMoves(db, this.messages, { now: this.now, events: messageEvents }, transaction)) {
      for (const outcome of reached) this.messageOutcomes.push({ channel: after.channel, outcome });
      // Graph answered the send that the recipient opted out (131050) or cannot be reached
      // (131026): handled as the status webhook's report of it is (whatsapp-recipient-failures.ts).
      const code = after.channel === 'whatsapp' && after.status === 'failed' ? failureCodeOf(after.error) : null;
      if (code === OPTED_OUT_CODE || code === UNDELIVERABLE_CODE) {
        recipientFailures.push({ accountId: after.account_id, to: after.to_address, contactId: after.contact_id, code, source: `message:${after.id}` });
      }
    }
    if (recipientFailures.length > 0) {
      this.whatsapp = await recordWhatsAppRecipientFailures(db, recipientFailures, { now: this.now, via: 'send', events: messageEvents }, transaction);
    }
    // The hard bounces' addresses, and those whose soft bounces kept coming, after the messages
    // (contact.suppressed recorded with the rest).
    this.suppressions.push(...(await softBounceSuppressions(db, this.softBounced, this.now, transaction)));
    for (const [accountId, list] of byAccount(this.suppressions)) {
      await addSuppressions(db, accountId, list.map(({ item }) => item), { now: this.now, events: messageEvents }, transaction);
    }
    // Pauses last (the lock order: their rows after the messages'); channel.paused once each.
    if (this.pauses.length > 0) {
      for (const row of await pauseChannels(db, this.pauses, { now: this.now, events: messageEvents }, transaction)) this.paused.push({ channel: row.channel, code: row.code });
    }
    const all = [...this.events, ...[...messageEvents].flatMap(([accountId, list]) => list.map((event) => ({ accountId, event })))];
    for (const [accountId, list] of byAccount(all)) await recordEvents(db, accountId, list.map(({ event }) => event), transaction);
  }
}

// What a message becomes with its send's outcome: `retry` goes back to queued with the
// attempt's error (sent again with the same key).
type MessageMove = 'sent' | 'captured' | 'unconfirmed' | 'skipped' | 'failed' | 'bounced' | 'retry' | 'cancelled';

async function writeMessageMoves(
  db: Database,
  moves: ReadonlyArray<{ id: string; status: MessageMove; providerMessageId: string | null; error: string | null; at: Date }>,
  options: StoreOptions,
  transaction: Transaction,
): Promise<MessageTransition[]> {
  if (moves.length === 0) return [];
  const retry = moves.filter((move) => move.status === 'retry');
  await markRetrying(db, retry.map((move) => ({ id: move.id, error: move.error ?? '' })), options, transaction);
  const changes: StatusChange[] = moves
    .filter((move) => move.status !== 'retry')
    .map((move) => ({
      id: move.id,
      status: move.status as Exclude<MessageMove, 'retry'>,
      at: move.at,
      providerMessageId: move.providerMessageId,
      error: move.error,
    }));
  return applyStatusChanges(db, changes, options, transaction);
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}
