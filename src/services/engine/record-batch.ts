import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forShare, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ValidationError } from '../../errors/app-errors';
import type { NewEventOf } from '../../schemas/event';
import type { ExecutionDto } from '../../schemas/sequence';
import type { Step } from '../../schemas/sequence-definition';
import type { RunStatus } from '../../schemas/statuses';
import { stateFromRow } from '../contacts/contact-row';
import { assertWithinLimits, type ContactState } from '../contacts/contact-state';
import { lockContactRows } from '../contacts/lock-contacts';
import { writeContactChanges, type ContactChange } from '../contacts/write-contact-changes';
import { recordEvents } from '../events/record-events';
import { runStatusChangedEvent } from '../events/run-events';
import { couldTriggerExit, exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import { newRowId } from '../ids';
import { exitsWithinBatch } from './batch-exits';
import { runsToLockContactsOf } from './ending-runs';
import { countRunMoves } from '../run-status/run-status-counts';
import { byAccount, claimedEventRun, claimedRunDto, lockClaimedRuns, type ClaimedRun } from './run-queue';
import type { StepOutcome } from './steps/step-outcome';

// Records what a batch of claimed runs did, in one transaction whatever the batch's size: the
// contacts the steps changed, the executions, the runs' moves and their events. Only the runs
// this claim still holds are written (their claim_token, locked here): a run whose lease ran
// out and went to another worker, or that was unenrolled, paused or moved meanwhile, is left as
// the other writer left it, and what this worker did for it is not recorded (a tag step's
// change rolls back with it; docs/sequences.md "Exactly once").
//
// Statements: the contacts' lock and write (tag and update steps), the runs' lock, one INSERT of
// the new executions, one UPDATE per kind of finished execution, one UPDATE per distinct new
// state of the runs (a batch at one step moves together), the events.

export type RunResult =
  // The sequence is not active: the run is set aside until it is (no due time).
  | { run: ClaimedRun; kind: 'park' }
  // Outside the sending window: due again at its next opening.
  | { run: ClaimedRun; kind: 'defer'; until: Date }
  // An exit rule holds, or the step is gone: the run ends.
  | { run: ClaimedRun; kind: 'end'; status: 'cancelled' | 'failed'; reason: string }
  // A step ran here (not a webhook).
  | { run: ClaimedRun; kind: 'step'; step: Step; steps: readonly Step[]; outcome: StepOutcome }
  // A webhook attempt ended (its execution row was written when it started).
  | { run: ClaimedRun; kind: 'webhook'; step: Step; steps: readonly Step[]; attempt: WebhookAttempt };

export interface WebhookAttempt {
  succeeded: boolean;
  detail: Record<string, unknown>;
  reason: string | null;
  // Failed: when to try again; null, it has failed for good.
  retryAt: Date | null;
  startedAt: Date;
}

// Counted by type and outcome for the metrics (src/metrics/metrics.ts).
export interface StepCount {
  type: string;
  outcome: 'succeeded' | 'failed' | 'began';
}

interface RunState {
  status: RunStatus;
  currentStepId: string | null;
  visit: number;
  attempt: number;
  stepStartedAt: Date | null;
  dueAt: Date | null;
  completedAt: Date | null;
  reason: string | null;
}

export async function recordBatch(db: Database, results: readonly RunResult[], now: Date): Promise<StepCount[]> {
  if (results.length === 0) return [];
  const token = results[0]!.run.token;
  return withTransaction(db, async (transaction) => {
    // Contacts first, then runs: the order every writer takes them in. Those the steps change,
    // and those of the runs this record may end (ending-runs.ts).
    const contactRows = await lockChangedContacts(db, runsToLockContactsOf(results), transaction);
    const active = await sequencesActiveAgain(db, results, transaction);
    const owned = await lockClaimedRuns(db, results.map((result) => result.run.id), token, transaction);
    // A run to set aside whose sequence was set active again since the claim: the re-activation
    // found it claimed and left it (park-runs.ts), so it is due now instead.
    const mine = results
      .filter((result) => owned.has(result.run.id))
      .map((result): RunResult => (result.kind === 'park' && active.has(result.run.sequenceId) ? { run: result.run, kind: 'defer', until: now } : result));

    const batch = new BatchWrites(now);
    const contactEvents = await applyContactChanges(db, mine, contactRows, batch, transaction);
    for (const result of mine) batch.add(result);

    await batch.write(db, transaction);
    const sequenceOf = new Map(mine.map(({ run }) => [run.id, run.sequenceId]));
    countRunMoves(db, transaction, batch.movedRunIds().map(([id, to]) => ({ sequenceId: sequenceOf.get(id)!, from: owned.get(id)!, to })));
    for (const [accountId, events] of groupEvents(contactEvents, batch.runEvents)) {
      await recordEvents(db, accountId, events, transaction);
    }
    return batch.counts;
  });
}

async function lockChangedContacts(db: Database, runs: readonly ClaimedRun[], transaction: Transaction) {
  const rows = new Map<string, ReturnType<typeof stateFromRow> & { row: ContactChange['row'] }>();
  for (const [accountId, accountRuns] of byAccount(runs)) {
    const ids = accountRuns.map((run) => run.contactId);
    for (const row of await lockContactRows(db, accountId, ids, transaction)) rows.set(row.id, { ...stateFromRow(row), row });
  }
  return rows;
}

// The sequences of the runs to set aside that are active now. Share-locked, sequence before
// runs as a re-activation takes them: one that has not committed yet is waited for, and one that
// comes later finds the run set aside and makes it due (park-runs.ts).
async function sequencesActiveAgain(db: Database, results: readonly RunResult[], transaction: Transaction): Promise<Set<string>> {
  const parked = [...new Set(results.filter((result) => result.kind === 'park').map((result) => result.run.sequenceId))];
  if (parked.length === 0) return new Set();
  const rows = await select<{ id: string }>(db, `SELECT id FROM sequences WHERE id IN (?) AND status = 'active'${forShare(db)}`, [parked], transaction);
  return new Set(rows.map((row) => row.id));
}

// The tag and update steps' changes, applied in batch order to the contacts as locked (a
// contact's two runs in one batch both see their change). A change that would break a contact's
// limits (101 tags) fails its step instead, and changes nothing.
async function applyContactChanges(
  db: Database,
  results: RunResult[],
  locked: Map<string, ContactState & { row: ContactChange['row'] }>,
  batch: BatchWrites,
  transaction: Transaction,
): Promise<AccountEvent[]> {
  const changes = new Map<string, ContactChange & { accountId: string }>();
  // A run whose exit rule another change of this batch meets is cancelled, and does not act.
  for (const [index, reason] of exitsWithinBatch(results, locked)) results[index] = { run: results[index]!.run, kind: 'end', status: 'cancelled', reason };
  for (let index = 0; index < results.length; index += 1) {
    const result = results[index]!;
    if (result.kind !== 'step' || result.outcome.kind !== 'change') continue;
    const current = changes.get(result.run.contactId);
    const base = locked.get(result.run.contactId);
    if (!base) continue;
    const before = current?.after ?? base;
    const after = result.outcome.change(stripRow(before));
    try {
      assertWithinLimits(after);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      results[index] = { ...result, kind: 'end', status: 'failed', reason: `step "${result.step.id}": ${error.message}` };
      batch.failedStep(result.run, result.step, error.message);
      continue;
    }
    changes.set(result.run.contactId, { accountId: result.run.accountId, row: base.row, before: current?.before ?? stripRow(base), after });
  }
  // The batch's other runs of a changed contact: an exit rule the change made hold ends them
  // here, as cancelRunsOnExit ends the contact's runs outside the batch.
  for (let index = 0; index < results.length; index += 1) {
    const result = results[index]!;
    const change = changes.get(result.run.contactId);
    if (!change || result.kind === 'end' || (result.kind === 'step' && result.outcome.kind === 'change')) continue;
    const rule = couldTriggerExit(change.before, change.after) ? matchingExitRule(result.run.exitWhen, change.after) : null;
    if (rule) results[index] = { run: result.run, kind: 'end', status: 'cancelled', reason: exitReason(rule) };
  }
  const exceptRunIds = new Set(results.map((result) => result.run.id));
  const events: AccountEvent[] = [];
  for (const [accountId, list] of byAccount([...changes.values()])) {
    for (const event of await writeContactChanges(db, accountId, list, transaction, exceptRunIds)) events.push({ accountId, event });
  }
  return events;
}

interface AccountEvent {
  accountId: string;
  event: NewEventOf;
}

function stripRow(state: ContactState & { row?: unknown }): ContactState {
  const { row: _row, ...rest } = state as ContactState & { row?: unknown };
  return rest;
}

// The writes of one batch, gathered, then sent set-based.
class BatchWrites {
  readonly counts: StepCount[] = [];
  readonly runEvents: AccountEvent[] = [];
  private readonly inserts: unknown[][] = [];
  // Running executions that end now, by how they end.
  // Running executions that end now, by how they end (each run's detail apart: a receiver's
  // answer differs from run to run, and must not split the statement).
  private readonly finishes = new Map<string, { status: string; reason: string | null; details: Map<string, string>; runIds: string[] }>();
  private readonly runUpdates = new Map<string, { state: RunState; ids: string[] }>();
  private readonly failedSteps = new Map<string, { step: Step; reason: string }>();

  constructor(private readonly now: Date) {}

  failedStep(run: ClaimedRun, step: Step, reason: string): void {
    this.failedSteps.set(run.id, { step, reason });
  }

  add(result: RunResult): void {
    const { run } = result;
    switch (result.kind) {
      case 'park':
        return this.move(run, { ...this.same(run), dueAt: null });
      case 'defer':
        return this.move(run, { ...this.same(run), dueAt: result.until });
      case 'end': {
        const failed = this.failedSteps.get(run.id);
        if (failed) this.execution(run, failed.step, { attempt: run.attempt + 1, status: 'failed', reason: failed.reason, startedAt: this.now });
        this.finish(run.id, 'skipped', `run ${result.status}: ${result.reason}`, null);
        return this.end(run, result.status, result.reason, failed ? { step: failed.step, reason: failed.reason } : null);
      }
      case 'step':
        return this.step(run, result.step, result.steps, result.outcome);
      case 'webhook':
        return this.webhook(run, result.step, result.steps, result.attempt);
    }
  }

  private step(run: ClaimedRun, step: Step, steps: readonly Step[], outcome: StepOutcome): void {
    if (outcome.kind === 'sleep') {
      this.counts.push({ type: step.type, outcome: 'began' });
      this.execution(run, step, { attempt: 1, status: 'running', startedAt: this.now, finished: false });
      return this.move(run, {
        ...this.same(run),
        status: 'running',
        attempt: 1,
        stepStartedAt: this.now,
        dueAt: outcome.until,
      }, run.status === 'pending' ? 'running' : undefined);
    }
    const detail = outcome.kind === 'next' ? (outcome.detail ?? null) : null;
    if (run.stepStartedAt) this.finish(run.id, 'succeeded', null, detail);
    else this.execution(run, step, { attempt: run.attempt + 1, status: 'succeeded', detail, startedAt: this.now });
    this.succeeded(run, step, steps, outcome.kind === 'complete' ? null : outcome.kind === 'next' ? outcome.to : undefined, {
      attempt: run.stepStartedAt ? Math.max(run.attempt, 1) : run.attempt + 1,
      detail,
      startedAt: run.stepStartedAt ?? this.now,
    });
  }

  private webhook(run: ClaimedRun, step: Step, steps: readonly Step[], attempt: WebhookAttempt): void {
    const detail = attempt.detail;
    const execution = { attempt: run.attempt, detail, startedAt: attempt.startedAt };
    if (attempt.succeeded) {
      this.finish(run.id, 'succeeded', null, detail);
      return this.succeeded(run, step, steps, undefined, execution);
    }
    this.finish(run.id, 'failed', attempt.reason, detail);
    this.counts.push({ type: step.type, outcome: 'failed' });
    const failedExecution = this.executionDto(step, { ...execution, status: 'failed', reason: attempt.reason, finishedAt: this.now });
    if (attempt.retryAt) {
      const state = { ...this.same(run), dueAt: attempt.retryAt };
      this.move(run, state);
      this.runEvents.push({
        accountId: run.accountId,
        event: { type: 'run.step_failed', data: { run: claimedEventRun(run, state), step: { id: step.id, type: step.type }, execution: failedExecution, retryAt: attempt.retryAt.toISOString() } },
      });
      return;
    }
    this.end(run, 'failed', `step "${step.id}": ${attempt.reason}`, null, failedExecution, step);
  }

  // The step is done: on to the next one (or `to`), or the run is complete.
  private succeeded(
    run: ClaimedRun,
    step: Step,
    steps: readonly Step[],
    to: string | null | undefined,
    execution: { attempt: number; detail: Record<string, unknown> | null; startedAt: Date },
  ): void {
    this.counts.push({ type: step.type, outcome: 'succeeded' });
    const index = steps.findIndex((candidate) => candidate.id === step.id);
    const nextId = to === null ? null : (to ?? steps[index + 1]?.id ?? null);
    const state: RunState =
      nextId === null
        ? { status: 'completed', currentStepId: null, visit: run.visit, attempt: 0, stepStartedAt: null, dueAt: null, completedAt: this.now, reason: null }
        : { status: 'running', currentStepId: nextId, visit: run.visit + 1, attempt: 0, stepStartedAt: null, dueAt: this.now, completedAt: null, reason: null };
    const dto = this.executionDto(step, { ...execution, status: 'succeeded', reason: null, finishedAt: this.now });
    if (run.status === 'pending') this.statusEvent(run, { ...state, status: 'running', completedAt: null }, 'pending');
    this.runEvents.push({
      accountId: run.accountId,
      event: { type: 'run.step_completed', data: { run: claimedEventRun(run, state), step: { id: step.id, type: step.type }, execution: dto } },
    });
    this.move(run, state, state.status === 'completed' ? 'completed' : undefined, 'running');
  }

  private end(
    run: ClaimedRun,
    status: 'cancelled' | 'failed',
    reason: string,
    failedStep: { step: Step; reason: string } | null,
    failedExecution?: ExecutionDto,
    step?: Step,
  ): void {
    const state: RunState = { ...this.same(run), status, dueAt: null, completedAt: this.now, reason: clip(reason), stepStartedAt: null };
    if (failedStep) {
      this.counts.push({ type: failedStep.step.type, outcome: 'failed' });
      failedExecution = this.executionDto(failedStep.step, {
        attempt: run.attempt + 1,
        detail: null,
        startedAt: this.now,
        status: 'failed',
        reason: failedStep.reason,
        finishedAt: this.now,
      });
      step = failedStep.step;
    }
    if (failedExecution && step) {
      this.runEvents.push({
        accountId: run.accountId,
        event: { type: 'run.step_failed', data: { run: claimedEventRun(run, state), step: { id: step.id, type: step.type }, execution: failedExecution, retryAt: null } },
      });
    }
    this.move(run, state, status);
  }

  private same(run: ClaimedRun): RunState {
    return {
      status: run.status,
      currentStepId: run.currentStepId,
      visit: run.visit,
      attempt: run.attempt,
      stepStartedAt: run.stepStartedAt,
      dueAt: null,
      completedAt: null,
      reason: null,
    };
  }

  // newStatus: a status event to record, from the run's status (or `from`).
  private move(run: ClaimedRun, state: RunState, newStatus?: RunStatus, from?: RunStatus): void {
    const key = JSON.stringify(state);
    const group = this.runUpdates.get(key);
    if (group) group.ids.push(run.id);
    else this.runUpdates.set(key, { state, ids: [run.id] });
    if (newStatus && newStatus !== (from ?? run.status)) this.statusEvent(run, state, from ?? run.status);
  }

  private statusEvent(run: ClaimedRun, state: RunState, from: RunStatus): void {
    this.runEvents.push({ accountId: run.accountId, event: runStatusChangedEvent(claimedRunDto(run, state), run.sequenceId, run.contactId, from) });
  }

  private execution(
    run: ClaimedRun,
    step: Step,
    row: { attempt: number; status: string; reason?: string | null; detail?: Record<string, unknown> | null; startedAt: Date; finished?: boolean },
  ): void {
    this.inserts.push([
      newRowId(),
      run.accountId,
      run.id,
      run.visit,
      row.attempt,
      step.id,
      step.type,
      row.status,
      clip(row.reason ?? null),
      row.detail ? JSON.stringify(row.detail) : null,
      row.startedAt,
      row.finished === false ? null : this.now,
    ]);
  }

  private finish(runId: string, status: string, reason: string | null, detail: Record<string, unknown> | null): void {
    const key = JSON.stringify([status, reason]);
    let group = this.finishes.get(key);
    if (!group) this.finishes.set(key, (group = { status, reason: clip(reason), details: new Map(), runIds: [] }));
    group.runIds.push(runId);
    if (detail) group.details.set(runId, JSON.stringify(detail));
  }

  private executionDto(
    step: Step,
    row: { attempt: number; detail: Record<string, unknown> | null; startedAt: Date; status: ExecutionDto['status']; reason: string | null; finishedAt: Date },
  ): ExecutionDto {
    return {
      stepId: step.id,
      type: step.type,
      attempt: row.attempt,
      status: row.status,
      reason: row.reason,
      detail: row.detail,
      startedAt: row.startedAt.toISOString(),
      finishedAt: row.finishedAt.toISOString(),
    };
  }

  // Each run written, and the status it is written with.
  movedRunIds(): Array<[string, RunStatus]> {
    return [...this.runUpdates.values()].flatMap(({ state, ids }) => ids.map((id): [string, RunStatus] => [id, state.status]));
  }

  async write(db: Database, transaction: Transaction): Promise<void> {
    // Finished first: a run that fails its step ends the execution it had running.
    for (const { status, reason, details, runIds } of this.finishes.values()) {
      const detail = details.size === 0 ? 'detail' : `CASE run_id ${[...details.keys()].map(() => 'WHEN ? THEN ?').join(' ')} ELSE detail END`;
      await execute(
        db,
        `UPDATE run_step_executions SET status = ?, reason = ?, detail = ${detail}, finished_at = ? WHERE run_id IN (?) AND status = 'running'`,
        [status, reason, ...[...details].flat(), this.now, runIds],
        transaction,
      );
    }
    await insertRows(
      db,
      'run_step_executions',
      ['id', 'account_id', 'run_id', 'visit', 'attempt', 'step_id', 'type', 'status', 'reason', 'detail', 'started_at', 'finished_at'],
      this.inserts,
      transaction,
    );
    for (const { state, ids } of this.runUpdates.values()) {
      await execute(
        db,
        `UPDATE sequence_runs SET status = ?, current_step_id = ?, visit = ?, attempt = ?, step_started_at = ?, due_at = ?,
           completed_at = ?, reason = ?, claim_token = NULL, updated_at = ? WHERE id IN (?)`,
        [state.status, state.currentStepId, state.visit, state.attempt, state.stepStartedAt, state.dueAt, state.completedAt, state.reason, this.now, ids],
        transaction,
      );
    }
  }
}

// The reason columns hold 500 characters: a long error is cut, never a failed record.
export function clip(text: string): string;
export function clip(text: string | null): string | null;
export function clip(text: string | null): string | null {
  return text === null || text.length <= 500 ? text : `${text.slice(0, 499)}…`;
}

// Each account's events, contact changes first; accounts in one order, so that two workers
// take the accounts' event counters in the same order.
function groupEvents(contactEvents: AccountEvent[], runEvents: AccountEvent[]): Map<string, NewEventOf[]> {
  return new Map([...byAccount([...contactEvents, ...runEvents])].map(([accountId, items]) => [accountId, items.map(({ event }) => event)]));
}
