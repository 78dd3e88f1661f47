import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { execute, forShare, insertRows, select } from '../../db/sql/statements';
import { withTransaction } from '../../db/sql/transaction';
import { ValidationError } from '../../errors/app-errors';
import type { NewEventOf } from '../../schemas/event';
import type { ExecutionDto } from '../../schemas/sequence';
import type { Step, StepOf } from '../../schemas/sequence-definition';
import type { RunStatus } from '../../schemas/statuses';
import { stateFromRow, type ContactRow } from '../contacts/contact-row';
import { assertWithinLimits, type ContactState } from '../contacts/contact-state';
import { lockContactRows } from '../contacts/lock-contacts';
import { writeContactChanges, type ContactChange } from '../contacts/write-contact-changes';
import { recordEvents } from '../events/record-events';
import { runStatusChangedEvent } from '../events/run-events';
import { couldTriggerExit, exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import { newRowId } from '../ids';
import { countRunMoves } from '../run-status/run-status-counts';
import { countRunProgress, type RunProgress } from '../analytics/progress-counters';
import { progressOfChange } from '../analytics/run-change-progress';
import { exitsWithinBatch } from './batch-exits';
import { runsToLockContactsOf } from './ending-runs';
import { composeMessage, queuedAddress, queueStepMessages, type MessageStep } from './outbound/channels/message-body';
import { composeWebhook } from './outbound/channels/webhook';
import { cancelSends, queueSends, type SendToQueue } from '../runs/outbox';
import { byAccount, claimedEventRun, lockClaimedRuns } from './run-queue';
import type { ClaimedRun, RunResult } from './claimed-run';
import { changesRun, clip, nextRunState, runChangeSql, type RunChange, type RunFacts, type RunInput } from '../runs/run-state';
import type { StepCount } from './step-counts';
import { linksOf } from './chain';
import type { StepOutcome } from './steps/step-outcome';
import { recordWaits, type BeganWait } from './run-waits';
import { capsOfBatch, capVerdicts, marketingSendOf, type CapCandidate, type CapVerdict } from './frequency-cap-gate';

// Records what a batch of claimed runs did, in one transaction whatever the batch's size: the
// contacts the steps changed, the executions, the sends the steps queued, the runs' moves and
// their events. Only the runs this claim still holds are written (their claim_token, locked
// here): a run whose lease ran out and went to another worker, or that was unenrolled, paused
// or moved meanwhile, is left as the other writer left it, and what this worker did for it is
// not recorded (a tag step's change rolls back with it; docs/sequences.md "Exactly once").
//
// In three steps, none of which changes what it was given: what each run's step did once the
// contacts are locked (decide: a change applied, refused, or overtaken by an exit rule another
// change of the batch met), what that makes of the run (the state machine, run-state.ts), and
// the writes, set-based.
//
// Statements: the contacts' lock and write (tag and update steps), the runs' lock, the sends
// (webhook steps), one INSERT of the new executions, one UPDATE per kind of finished execution,
// one UPDATE per distinct new state of the runs (a batch at one step moves together), the events.

export interface RecordedBatch {
  counts: StepCount[];
  // Sends queued (or queued again): the dispatcher should look.
  sendsQueued: number;
  // wait_for steps that began and found their activity already recorded: due now.
  waitsMatched: number;
}

// What the record does about one run, decided: its moves in order, each an input to the state
// machine and what it leaves in the timeline. One move, but for a chain of local steps
// (plan-run.ts): one per step it takes, and then its end (an exit rule met, a window closed).
// `contact`: the contact as its chain left it (what a send it queues composes), if it changed it.
interface Decision {
  run: ClaimedRun;
  moves: Move[];
  contact?: ContactState;
  // The run's version's steps, for a step taken here (a capped message skipped goes to the next).
  steps?: readonly Step[];
}

interface Move {
  input: RunInput;
  step?: Step;
  record:
    | { kind: 'none' }
    // A wait began: its execution runs until the wait ends.
    | { kind: 'began' }
    // A wait_for began: as a wait, and its contact's matching activity is looked for
    // (run-waits.ts).
    | { kind: 'await'; activity: string; match: Record<string, unknown> | null }
    | { kind: 'succeeded'; detail: Record<string, unknown> | null }
    | { kind: 'failed'; reason: string }
    // The run ends here: an execution under way is skipped, a send not started is cancelled.
    | { kind: 'ended'; reason: string }
    // A send queued with the run's move; the run waits for its outcome.
    | { kind: 'send'; send: Extract<StepOutcome, { kind: 'send' }> }
    // A message step skipped before anything was queued (its contact's frequency cap): the run
    // goes on as after a success.
    | { kind: 'skipped'; reason: string }
    // A message held back by its contact's frequency cap: the run waits, its step not begun, due
    // `until` (sequence_runs.capped_until says why).
    | { kind: 'capped'; until: Date };
}

// How a tag or update step's change to its contact came out, in batch order. Refused: the change
// of the run's step `at` (0 its own step, 1 and on its chain's) breaks the contact's limits; the
// changes before it are applied.
type ChangeVerdict = { kind: 'applied' } | { kind: 'refused'; reason: string; at: number } | { kind: 'exit'; reason: string };

export async function recordBatch(db: Database, results: readonly RunResult[], now: Date): Promise<RecordedBatch> {
  if (results.length === 0) return { counts: [], sendsQueued: 0, waitsMatched: 0 };
  const token = results[0]!.run.token;
  return withTransaction(db, async (transaction) => {
    // Contacts first, then runs: the order every writer takes them in. Those the steps change,
    // those of the runs this record may end (ending-runs.ts), and those of marketing messages
    // under a frequency cap (frequency-cap-gate.ts: the lock that makes the count exact).
    const capped = await capsOfBatch(db, results, transaction);
    const contactRows = await lockChangedContacts(db, [...runsToLockContactsOf(results), ...capped.runs], transaction);
    const active = await sequencesActiveAgain(db, results, transaction);
    const owned = await lockClaimedRuns(db, results.map((result) => result.run.id), token, transaction);
    // A run to set aside whose sequence was set active again since the claim: the re-activation
    // found it claimed and left it (park-runs.ts), so it is due now instead.
    const mine = results
      .filter((result) => owned.has(result.run.id))
      .map((result): RunResult => (result.kind === 'park' && active.has(result.run.sequenceId) ? { run: result.run, kind: 'defer', until: now } : result));

    const { verdicts, changes, states } = resolveContactChanges(mine, contactRows);
    const decided = mine.map((result) => decide(result, verdicts.get(result.run.id), states.get(result.run.id)));
    // The capped sends of the batch, decided together on the counts under the contacts' locks.
    const capVerdictsOf = await capVerdicts(db, decided.flatMap(capCandidate), capped.caps, now, transaction);
    const decisions = capVerdictsOf.size === 0 ? decided : decided.map((decision) => withCap(decision, capVerdictsOf.get(decision.run.id)));

    const contactEvents: AccountEvent[] = [];
    const exceptRunIds = new Set(mine.map((result) => result.run.id));
    for (const [accountId, list] of byAccount([...changes.values()])) {
      for (const event of await writeContactChanges(db, accountId, list, transaction, exceptRunIds)) contactEvents.push({ accountId, event });
    }
    const queued = await queueSends(db, decisions.flatMap(sendToQueue(now)), now, transaction);
    await queueStepMessages(db, queued.written, now, transaction);
    const sendsQueued = queued.due;

    const writes = new BatchWrites(now);
    for (const decision of decisions) writes.add(decision);
    await writes.write(db, transaction);
    await markCapped(db, decisions, transaction);
    // After the runs' UPDATE: a wait matched by an activity already recorded writes the run again.
    const waitsMatched = await recordWaits(db, { began: writes.waits, left: writes.leftWaits, now }, transaction);
    // The counters of runs by status (run-status-counts.ts), from the statuses read under the
    // runs' locks.
    countRunMoves(db, transaction, writes.moves().map(({ run, to }) => ({ sequenceId: run.sequenceId, from: owned.get(run.id)!, to })));
    // The analytics counters (analytics/progress-counters.ts): each run's move, as written.
    // A chain's runs move once per step, in order.
    countRunProgress(db, transaction, now, writes.progress);
    for (const [accountId, events] of groupEvents(contactEvents, writes.runEvents)) {
      await recordEvents(db, accountId, events, transaction);
    }
    return { counts: writes.counts, sendsQueued, waitsMatched };
  });
}

async function lockChangedContacts(db: Database, runs: readonly ClaimedRun[], transaction: Transaction) {
  const rows = new Map<string, ContactState & { row: ContactChange['row'] }>();
  for (const [accountId, accountRuns] of byAccount(runs)) {
    const ids = [...new Set(accountRuns.map((run) => run.contactId))];
    // The emails as the claim read them: the lock goes through the email index at once.
    const emails = new Map(accountRuns.map((run) => [run.contactId, run.contact.email_normalized]));
    for (const row of await lockContactRows(db, accountId, ids, transaction, emails)) rows.set(row.id, { ...stateFromRow(row), row });
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
// contact's two runs in one batch both see their change); a chain's changes in its order. A
// change that would break a contact's limits (101 tags) is refused: its step fails and changes
// nothing (a chain's earlier changes stay). The batch's other runs of a changed contact whose
// exit rule the change made hold end here, as cancelRunsOnExit ends the contact's runs outside
// the batch.
function resolveContactChanges(
  results: readonly RunResult[],
  locked: ReadonlyMap<string, ContactState & { row: ContactChange['row'] }>,
): { verdicts: Map<string, ChangeVerdict>; changes: Map<string, ContactChange & { accountId: string }>; states: Map<string, ContactState> } {
  const verdicts = new Map<string, ChangeVerdict>();
  const changes = new Map<string, ContactChange & { accountId: string }>();
  // Each changing run's contact as its changes left it.
  const states = new Map<string, ContactState>();
  // A run whose exit rule another change of this batch meets is cancelled, and does not act
  // (batch-exits.ts).
  for (const [index, reason] of exitsWithinBatch(results, locked)) verdicts.set(results[index]!.run.id, { kind: 'exit', reason });
  for (const result of results) {
    if (result.kind !== 'step' || verdicts.has(result.run.id)) continue;
    const links = linksOf(result);
    if (!links.some((link) => link.outcome.kind === 'change')) continue;
    const base = locked.get(result.run.contactId);
    if (!base) continue;
    const current = changes.get(result.run.contactId);
    const before = current?.after ?? stripRow(base);
    let state = before;
    let verdict: ChangeVerdict = { kind: 'applied' };
    for (const [at, link] of links.entries()) {
      if (link.outcome.kind !== 'change') continue;
      const after = link.outcome.change(state);
      try {
        assertWithinLimits(after);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        verdict = { kind: 'refused', reason: error.message, at };
        break;
      }
      state = after;
    }
    verdicts.set(result.run.id, verdict);
    // Refused at its first change: nothing applied.
    if (verdict.kind === 'refused' && !links.slice(0, verdict.at).some((link) => link.outcome.kind === 'change')) continue;
    states.set(result.run.id, state);
    changes.set(result.run.contactId, { accountId: result.run.accountId, row: base.row, before: current?.before ?? stripRow(base), after: state });
  }
  for (const result of results) {
    const change = changes.get(result.run.contactId);
    if (!change || result.kind === 'end' || verdicts.has(result.run.id)) continue;
    const rule = couldTriggerExit(change.before, change.after) ? matchingExitRule(result.run.exitWhen, change.after) : null;
    if (rule) verdicts.set(result.run.id, { kind: 'exit', reason: exitReason(rule) });
  }
  return { verdicts, changes, states };
}

// What a run's result comes to, once its contact's changes are known.
function decide(result: RunResult, verdict: ChangeVerdict | undefined, contact: ContactState | undefined): Decision {
  const { run } = result;
  const one = (move: Move): Decision => ({ run, moves: [move] });
  if (verdict?.kind === 'exit') return one({ input: { kind: 'end', status: 'cancelled', reason: verdict.reason }, record: { kind: 'ended', reason: `run cancelled: ${verdict.reason}` } });
  switch (result.kind) {
    case 'park':
      return one({ input: { kind: 'set-aside' }, record: { kind: 'none' } });
    case 'defer':
      return one({ input: { kind: 'hold', until: result.until }, record: { kind: 'none' } });
    case 'end':
      return one({ input: { kind: 'end', status: result.status, reason: result.reason }, record: { kind: 'ended', reason: `run ${result.status}: ${result.reason}` } });
    case 'step': {
      const moves: Move[] = [];
      for (const [at, { step, outcome }] of linksOf(result).entries()) {
        const refused = verdict?.kind === 'refused' && verdict.at === at ? verdict.reason : null;
        moves.push(stepMove(step, outcome, result.steps, refused));
        // A chain stops at the step whose change is refused: the run fails there.
        if (refused !== null) return { run, moves, contact, steps: result.steps };
      }
      const { after } = result;
      if (after?.kind === 'exit') moves.push({ input: { kind: 'end', status: 'cancelled', reason: after.reason }, record: { kind: 'ended', reason: `run cancelled: ${after.reason}` } });
      if (after?.kind === 'defer') moves.push({ input: { kind: 'hold', until: after.until }, record: { kind: 'none' } });
      return { run, moves, contact, steps: result.steps };
    }
  }
}

// The marketing message a decision queues, for the frequency cap (frequency-cap-gate.ts).
function capCandidate(decision: Decision): CapCandidate[] {
  const at = decision.moves.findIndex((move) => move.record.kind === 'send');
  const move = decision.moves[at];
  if (!move?.step || move.record.kind !== 'send') return [];
  const send = marketingSendOf({ run: decision.run, kind: 'step', step: move.step, steps: [], outcome: move.record.send });
  return send ? [{ run: decision.run, channel: send.channel, visit: decision.run.visit + at }] : [];
}

// A decision whose message the cap holds back: its send move becomes a wait (the step not
// begun, so the sending window is looked at again when it is due) or a skip to the next step.
function withCap(decision: Decision, verdict: CapVerdict | undefined): Decision {
  if (!verdict) return decision;
  const at = decision.moves.findIndex((move) => move.record.kind === 'send');
  const move = decision.moves[at]!;
  const step = move.step!;
  const capped: Move =
    verdict.kind === 'wait'
      ? { step, input: { kind: 'hold', until: verdict.until }, record: { kind: 'capped', until: verdict.until } }
      : { step, input: { kind: 'succeeded', next: followingStep(decision.steps ?? [], step) }, record: { kind: 'skipped', reason: 'frequency_capped' } };
  return { ...decision, moves: [...decision.moves.slice(0, at), capped] };
}

function followingStep(steps: readonly Step[], step: Step): string | null {
  return steps[steps.findIndex((candidate) => candidate.id === step.id) + 1]?.id ?? null;
}

// The runs held back by a cap: capped_until is their due time, read by run-waiting.ts.
async function markCapped(db: Database, decisions: readonly Decision[], transaction: Transaction): Promise<void> {
  const byUntil = new Map<number, string[]>();
  for (const decision of decisions) {
    const last = decision.moves[decision.moves.length - 1];
    if (last?.record.kind !== 'capped') continue;
    const at = last.record.until.getTime();
    byUntil.set(at, [...(byUntil.get(at) ?? []), decision.run.id]);
  }
  for (const [at, ids] of byUntil) await execute(db, 'UPDATE sequence_runs SET capped_until = ? WHERE id IN (?)', [new Date(at), ids], transaction);
}

// A step's move, from its outcome (refused: its change breaks the contact's limits).
function stepMove(step: Step, outcome: StepOutcome, steps: readonly Step[], refused: string | null): Move {
  const following = () => steps[steps.findIndex((candidate) => candidate.id === step.id) + 1]?.id ?? null;
  switch (outcome.kind) {
    case 'sleep':
      return { step, input: { kind: 'began', until: outcome.until }, record: { kind: 'began' } };
    case 'await':
      return { step, input: { kind: 'began', until: outcome.until }, record: { kind: 'await', activity: outcome.activity, match: outcome.match } };
    case 'send':
      return { step, input: { kind: 'began', until: null }, record: { kind: 'send', send: outcome } };
    case 'complete':
      return { step, input: { kind: 'succeeded', next: null }, record: { kind: 'succeeded', detail: null } };
    case 'next':
      return { step, input: { kind: 'succeeded', next: outcome.to ?? following() }, record: { kind: 'succeeded', detail: outcome.detail ?? null } };
    case 'change':
      if (refused !== null) return { step, input: { kind: 'failed', reason: `step "${step.id}": ${refused}` }, record: { kind: 'failed', reason: refused } };
      return { step, input: { kind: 'succeeded', next: following() }, record: { kind: 'succeeded', detail: null } };
  }
}

// The sends of the steps that began one (webhook, email and whatsapp steps), for queueSends. A
// chain's send is its last move, at the visit its chain reached, and is composed with the run at
// that step and the contact as the chain changed it.
function sendToQueue(now: Date) {
  return (decision: Decision): SendToQueue[] => {
    const at = decision.moves.findIndex((move) => move.record.kind === 'send');
    const move = decision.moves[at];
    if (!move || move.record.kind !== 'send' || !move.step) return [];
    const { step } = move;
    const run: ClaimedRun =
      at === 0 && !decision.contact
        ? decision.run
        : { ...decision.run, visit: decision.run.visit + at, currentStepId: step.id, contact: decision.contact ? rowOf(decision.run.contact, decision.contact) : decision.run.contact };
    const { channel, target } = move.record.send;
    return [
      {
        run: { id: run.id, accountId: run.accountId, visit: run.visit },
        stepId: step.id,
        channel,
        target,
        compose: (stepVisit) =>
          step.type === 'webhook' ? composeWebhook(run, step, stepVisit, now) : composeMessage(run, step as MessageStep, stepVisit),
        message:
          channel === 'email' || channel === 'whatsapp'
            ? { contactId: run.contactId, sequenceId: run.sequenceId, to: queuedAddress(channel, run.contact), category: (step as MessageStep).category ?? 'marketing' }
            : undefined,
      },
    ];
  };
}

// A contact's row with the state a chain left it in (its tags and custom fields: what tag and
// update steps change).
function rowOf(row: ContactRow, state: ContactState): ContactRow {
  return { ...row, tags: JSON.stringify(state.tags), custom_fields: JSON.stringify(state.customFields) };
}

interface AccountEvent {
  accountId: string;
  event: NewEventOf;
}

function stripRow(state: ContactState & { row?: unknown }): ContactState {
  const { row: _row, ...rest } = state as ContactState & { row?: unknown };
  return rest;
}

function factsOf(run: ClaimedRun): RunFacts {
  return { status: run.status, currentStepId: run.currentStepId, stepStartedAt: run.stepStartedAt, claimed: true };
}

// The run as a change left it, for the change after it (a chain's next step).
function factsAfter(facts: RunFacts, change: RunChange): RunFacts {
  const { set } = change;
  return {
    status: change.to,
    currentStepId: set.currentStepId !== undefined ? set.currentStepId : facts.currentStepId,
    stepStartedAt: set.stepStartedAt !== undefined ? set.stepStartedAt : facts.stepStartedAt,
    claimed: true,
  };
}

// A chain's changes as the one change the run's UPDATE writes: each column as the last change
// that sets it left it, the status it ends with, and its visit moved once per step it left
// (visit + n).
function mergedChange(from: RunStatus, changes: readonly RunChange[]): RunChange {
  if (changes.length === 1) return changes[0]!;
  const set: RunChange['set'] = Object.assign({}, ...changes.map((change) => change.set));
  const visits = changes.filter((change) => change.set.visit === 'next').length;
  delete set.visit;
  if (visits > 0) set.visit = visits === 1 ? 'next' : visits;
  const to = changes[changes.length - 1]!.to;
  delete set.status;
  if (to !== from) set.status = to;
  return { from, to, set, keepClaim: changes.every((change) => change.keepClaim) };
}

// The writes of one batch, gathered, then sent set-based.
class BatchWrites {
  readonly counts: StepCount[] = [];
  readonly runEvents: AccountEvent[] = [];
  // Each run's moves for the analytics counters, in order (a chain's, one per step).
  readonly progress: RunProgress[] = [];
  private readonly inserts: unknown[][] = [];
  // Executions under way that end now, by how they end (each run's detail apart: a branch's
  // way differs from run to run, and must not split the statement).
  private readonly finishes = new Map<string, { status: string; reason: string | null; details: Map<string, string>; runIds: string[] }>();
  private readonly runUpdates = new Map<string, { change: RunChange; ids: string[] }>();
  private readonly ended: string[] = [];
  private readonly statusMoves: Array<{ run: ClaimedRun; to: RunStatus }> = [];
  // The wait_for steps that began (or wait on), and the runs that leave one (run-waits.ts).
  readonly waits: BeganWait[] = [];
  readonly leftWaits: string[] = [];

  constructor(private readonly now: Date) {}

  add(decision: Decision): void {
    const { run } = decision;
    // A chain's moves one after the other, each from the state the one before left (its step,
    // its visit); the run is written once, with where they end.
    let facts = factsOf(run);
    let visit = run.visit;
    const changes: RunChange[] = [];
    for (const [index, move] of decision.moves.entries()) {
      const change = nextRunState(facts, move.input, this.now);
      const left = move.record.kind === 'skipped' ? { outcome: 'skipped' as const, reason: move.record.reason } : undefined;
      this.progress.push(progressOfChange(run.sequenceId, facts.currentStepId ?? null, move.input, change, left));
      this.move(run, move, change, { first: index === 0, visit, stepId: facts.currentStepId ?? null });
      changes.push(change);
      if (change.set.visit === 'next') visit += 1;
      facts = factsAfter(facts, change);
    }
    const own = decision.moves[0];
    if (run.stepStartedAt && own && own.record.kind !== 'await' && (own.step?.type === 'wait_for' || own.record.kind === 'ended')) this.leftWaits.push(run.id);
    const change = mergedChange(run.status, changes);
    if (changesRun(change)) {
      const key = JSON.stringify([change.set, change.keepClaim]);
      const group = this.runUpdates.get(key);
      if (group) group.ids.push(run.id);
      else this.runUpdates.set(key, { change, ids: [run.id] });
      // Counted from the status the run has under its lock (the caller's), to the one written.
      if (change.set.status !== undefined) this.statusMoves.push({ run, to: change.set.status });
    }
    // One status event per run and record, from the status it had to the one it has: a one-step
    // run that completes here goes pending -> completed, and so does a chain of local steps that
    // ends the run (docs/webhooks.md "Feed versions").
    if (change.to !== run.status) this.statusEvent(run, change, run.status);
  }

  // One move's record: its execution and its event. `first`: the run's own step (the claimed
  // state: its attempts, a wait under way); a chain's later steps start afresh, attempt 1, at
  // the visits after the run's.
  private move(run: ClaimedRun, move: Move, change: RunChange, at: { first: boolean; visit: number; stepId: string | null }): void {
    const { step, record } = move;
    const { first, visit } = at;
    switch (record.kind) {
      case 'began':
        this.counts.push({ type: step!.type, outcome: 'began' });
        this.execution(run, step!, visit, { attempt: 1, status: 'running', startedAt: this.now, finished: false });
        break;
      case 'await':
        // Woken before its timeout, a wait_for under way waits on: its execution is the one it has.
        if (!(first && run.stepStartedAt)) {
          this.counts.push({ type: step!.type, outcome: 'began' });
          this.execution(run, step!, visit, { attempt: 1, status: 'running', startedAt: this.now, finished: false });
        }
        this.waits.push({
          run,
          visit,
          stepId: step!.id,
          activity: record.activity,
          match: record.match,
          // Since when an activity already recorded counts (run-waits.ts): the step's start, or
          // when the run came to it (its due time as claimed).
          since: first && run.stepStartedAt ? run.stepStartedAt : run.dueAt,
        });
        break;
      case 'succeeded': {
        this.counts.push({ type: step!.type, outcome: 'succeeded' });
        const begun = first ? run.stepStartedAt : null;
        const execution = { attempt: !first ? 1 : begun ? Math.max(run.attempt, 1) : run.attempt + 1, detail: record.detail, startedAt: begun ?? this.now };
        if (begun) this.finish(run.id, 'succeeded', null, record.detail);
        else this.execution(run, step!, visit, { ...execution, status: 'succeeded' });
        const dto = executionDto(step!, { ...execution, status: 'succeeded', reason: null, finishedAt: this.now });
        this.runEvents.push({ accountId: run.accountId, event: { type: 'run.step_completed', data: { run: this.eventRun(run, change, at.stepId), step: { id: step!.id, type: step!.type }, execution: dto } } });
        break;
      }
      case 'failed': {
        this.counts.push({ type: step!.type, outcome: 'failed' });
        const execution = { attempt: first ? run.attempt + 1 : 1, detail: null, startedAt: this.now };
        this.execution(run, step!, visit, { ...execution, status: 'failed', reason: record.reason });
        if (first) this.finish(run.id, 'skipped', `run failed: ${move.input.kind === 'failed' ? move.input.reason : record.reason}`, null);
        const dto = executionDto(step!, { ...execution, status: 'failed', reason: record.reason, finishedAt: this.now });
        this.runEvents.push({ accountId: run.accountId, event: { type: 'run.step_failed', data: { run: this.eventRun(run, change, at.stepId), step: { id: step!.id, type: step!.type }, execution: dto, retryAt: null } } });
        break;
      }
      case 'ended':
        // An execution under way is the run's own step's (a chain's steps are finished).
        if (first) this.finish(run.id, 'skipped', record.reason, null);
        this.ended.push(run.id);
        break;
      case 'skipped': {
        this.counts.push({ type: step!.type, outcome: 'skipped' });
        const execution = { attempt: first ? run.attempt + 1 : 1, detail: null, startedAt: this.now };
        this.execution(run, step!, visit, { ...execution, status: 'skipped', reason: record.reason });
        const dto = executionDto(step!, { ...execution, status: 'skipped', reason: record.reason, finishedAt: this.now });
        this.runEvents.push({ accountId: run.accountId, event: { type: 'run.step_completed', data: { run: this.eventRun(run, change, at.stepId), step: { id: step!.id, type: step!.type }, execution: dto } } });
        break;
      }
      case 'send':
      case 'capped':
      case 'none':
        break;
    }
  }

  // The run as the change leaves it; `stepId`: the step it was at before (a chain's step).
  private eventRun(run: ClaimedRun, change: RunChange, stepId: string | null = run.currentStepId) {
    const { set } = change;
    return claimedEventRun(run, {
      status: change.to,
      currentStepId: set.currentStepId !== undefined ? set.currentStepId : stepId,
      completedAt: set.completedAt ?? null,
      reason: set.reason ?? null,
    });
  }

  private statusEvent(run: ClaimedRun, change: RunChange, from: RunStatus): void {
    const event = this.eventRun(run, change);
    this.runEvents.push({ accountId: run.accountId, event: runStatusChangedEvent(event, run.sequenceId, run.contactId, from) });
  }

  private execution(
    run: ClaimedRun,
    step: Step,
    visit: number,
    row: { attempt: number; status: string; reason?: string | null; detail?: Record<string, unknown> | null; startedAt: Date; finished?: boolean },
  ): void {
    this.inserts.push([
      newRowId(),
      run.accountId,
      run.id,
      visit,
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

  // Each run whose status the batch writes, and the status it is written with.
  moves(): Array<{ run: ClaimedRun; to: RunStatus }> {
    return this.statusMoves;
  }

  async write(db: Database, transaction: Transaction): Promise<void> {
    // Finished first, while the runs are still at the visit their execution belongs to: an
    // execution of an older visit is never closed here (a move skipped it when it moved the run).
    for (const { status, reason, details, runIds } of this.finishes.values()) {
      const detail = details.size === 0 ? 'detail' : `CASE run_id ${[...details.keys()].map(() => 'WHEN ? THEN ?').join(' ')} ELSE detail END`;
      await execute(
        db,
        `UPDATE run_step_executions SET status = ?, reason = ?, detail = ${detail}, finished_at = ?
         WHERE run_id IN (?) AND status = 'running' AND visit = (SELECT r.visit FROM sequence_runs r WHERE r.id = run_step_executions.run_id)`,
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
    await cancelSends(db, this.ended, this.now, transaction);
    for (const { change, ids } of this.runUpdates.values()) {
      const { set, values } = runChangeSql(change, this.now);
      await execute(db, `UPDATE sequence_runs SET ${set} WHERE id IN (?)`, [...values, ids], transaction);
    }
  }
}

function executionDto(
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

// Each account's events, contact changes first; accounts in one order, so that two workers
// take the accounts' event counters in the same order.
function groupEvents(contactEvents: AccountEvent[], runEvents: AccountEvent[]): Map<string, NewEventOf[]> {
  return new Map([...byAccount([...contactEvents, ...runEvents])].map(([accountId, items]) => [accountId, items.map(({ event }) => event)]));
}
