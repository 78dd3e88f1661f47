import { ConflictError } from '../../errors/app-errors';
import { ACTIVE_RUN_STATUSES, type RunStatus } from '../../schemas/statuses';

// The run's one state machine: given a run, where it is, and what just happened to it (its step
// began, succeeded or failed; a pause, a resume, an end, a move, its sequence set aside or
// active again), the run's next state. Every writer of sequence_runs asks here and writes what
// it answers: the engine's record (record-batch.ts), the outbound outcomes
// (outbound/record-outcomes.ts), pause, resume and runs.transition (run-transitions.ts), the
// ends (exit-rules/end-runs.ts), the moves (move-runs.ts) and the set-aside runs (park-runs.ts).
// No writer decides a run's status, due time or step by itself. It reads nothing and writes
// nothing: the callers send the change, set-based where they write many runs alike.
//
// A run's columns, as the engine uses them (db/migrations/20261208000000-create-sequence-engine.js):
// due_at is when the engine looks at it next (NULL: nothing to do until something outside
// the engine acts: a paused or set-aside run, or a run waiting at a step for its send's
// outcome); a claim's lease is its due_at too; paused_due_at keeps a paused run's due time.

export interface RunFacts {
  status: RunStatus;
  currentStepId?: string | null;
  stepStartedAt?: Date | null;
  dueAt?: Date | null;
  pausedDueAt?: Date | null;
  pausedFrom?: RunStatus | null;
  // An engine holds a claim on it (its due_at is then the lease's end, not a due time).
  claimed?: boolean;
}

export type RunInput =
  // Its sequence is not active: nothing is due until it is (park-runs.ts wakes it).
  | { kind: 'set-aside' }
  // Its step acts, and the sending window is closed: due again at its opening.
  | { kind: 'hold'; until: Date }
  // Due now: its sequence is active again, or the window it waited for changed.
  | { kind: 'wake' }
  // Its wait_for step's activity was recorded (activities/match-waits.ts): due now, to go on;
  // a paused run goes on when resumed.
  | { kind: 'matched' }
  // Its step began and waits: a wait until `until`; a send (until null) for its outcome.
  | { kind: 'began'; until: Date | null }
  // Its step is done: on to `next`, or complete (null).
  | { kind: 'succeeded'; next: string | null }
  // Its send failed and will be tried again: the outbox row holds the time; the run waits on.
  | { kind: 'retrying' }
  // Its step failed for good.
  | { kind: 'failed'; reason: string }
  // Ended from outside its steps: an exit rule, unenroll, a step gone from its version.
  | { kind: 'end'; status: 'cancelled' | 'failed' | 'completed'; reason: string | null }
  | { kind: 'pause' }
  | { kind: 'resume' }
  // runs.transition: the internal runner's move (runs of sequences without steps, mostly).
  | { kind: 'transition'; to: RunStatus }
  // moveRuns: onto `stepId` of `version`. keep 'send': the step it leaves has a send under way
  // that the new step would repeat (same endpoint, same payload): the run keeps its visit, so
  // the send goes on with its id and its attempts (docs/sequences.md "What a receiver can
  // see twice"). keep 'wait': the new step is the same wait (same duration or the same time of
  // day): the run keeps its visit and its due time, so the wait ends when it would have.
  | { kind: 'move'; version: number; stepId: string; keep: 'send' | 'wait' | null };

// The columns a change sets; a column not named keeps its value. `visit: 'next'` is the visit
// after the run's own (visit + 1); a number n, n visits after it (visit + n: a chain of steps
// taken in one record, record-batch.ts).
export interface RunColumns {
  status: RunStatus;
  version: number;
  currentStepId: string | null;
  visit: 'next' | number;
  attempt: number;
  stepStartedAt: Date | null;
  dueAt: Date | null;
  pausedDueAt: Date | null;
  pausedFrom: RunStatus | null;
  completedAt: Date | null;
  reason: string | null;
}

export interface RunChange {
  from: RunStatus;
  to: RunStatus;
  set: Partial<RunColumns>;
  // Whether an engine's claim on the run stays valid. Every move but a runner's transition
  // between active statuses voids it: a claim in the middle of the old state cannot record.
  keepClaim: boolean;
}

// The moves runs.transition may make (docs/decisions.md "Runs"). Anything else is a 409.
const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  pending: ['running', 'cancelled', 'failed'],
  running: ['paused', 'completed', 'failed', 'cancelled'],
  paused: ['running', 'cancelled', 'failed'],
  completed: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function isActiveStatus(status: RunStatus): boolean {
  return ACTIVE_RUN_STATUSES.includes(status);
}

export function nextRunState(run: RunFacts, input: RunInput, now: Date): RunChange {
  const from = run.status;
  const change = (to: RunStatus, set: Partial<RunColumns>, keepClaim = false): RunChange => ({ from, to, set: to === from ? set : { ...set, status: to }, keepClaim });
  switch (input.kind) {
    case 'set-aside':
      return change(from, { dueAt: null });
    case 'hold':
      return change(from, { dueAt: input.until });
    case 'wake':
      return change(from, { dueAt: now }, true);
    case 'matched':
      return from === 'paused' ? change(from, { pausedDueAt: now }) : change(from, { dueAt: now });
    case 'began':
      return change(from === 'paused' ? from : 'running', {
        attempt: 1,
        // Begun again (a resumed run whose send is under way): it began when it first did.
        stepStartedAt: run.stepStartedAt ?? now,
        dueAt: input.until,
      });
    case 'succeeded':
      if (input.next === null) return ended('completed', null);
      // A paused run whose send was answered after the pause: it moves on, and stays paused.
      if (from === 'paused') {
        return change('paused', { currentStepId: input.next, visit: 'next', attempt: 0, stepStartedAt: null, dueAt: null, pausedDueAt: now, pausedFrom: 'running' });
      }
      return change('running', { currentStepId: input.next, visit: 'next', attempt: 0, stepStartedAt: null, dueAt: now, completedAt: null, reason: null });
    case 'retrying':
      return { from, to: from, set: {}, keepClaim: false };
    case 'failed':
      return ended('failed', input.reason);
    case 'end':
      return { ...endState(input, now), from };
    case 'pause':
      if (from !== 'pending' && from !== 'running') throw new ConflictError(`A ${from} run cannot be paused`, 'invalid_run_transition');
      return paused();
    case 'resume':
      if (from !== 'paused') throw new ConflictError(`A ${from} run cannot be resumed: only a paused one`, 'invalid_run_transition');
      return resumed();
    case 'transition':
      if (!canTransition(from, input.to)) throw new ConflictError(`A run cannot move from ${from} to ${input.to}`, 'invalid_run_transition');
      if (!isActiveStatus(input.to)) return ended(input.to as 'cancelled' | 'failed' | 'completed', undefined);
      if (input.to === 'paused') return paused();
      if (from === 'paused') return resumed();
      return change(input.to, {}, true);
    case 'move':
      // A paused run keeps its due time apart either way; a running one looks at its send again now.
      if (input.keep === 'wait' || (input.keep === 'send' && from === 'paused')) return change(from, { version: input.version, currentStepId: input.stepId });
      if (input.keep === 'send') return change(from, { version: input.version, currentStepId: input.stepId, dueAt: now });
      // The new step starts afresh, on a new visit; a paused run starts it when resumed.
      return change(from, {
        version: input.version,
        currentStepId: input.stepId,
        visit: 'next',
        attempt: 0,
        stepStartedAt: null,
        ...(from === 'paused' ? { dueAt: null, pausedDueAt: now } : { dueAt: now, pausedDueAt: null }),
      });
  }

  function ended(to: 'cancelled' | 'failed' | 'completed', reason: string | null | undefined): RunChange {
    return { ...endState({ status: to, reason }, now), from };
  }

  // Pausing keeps the due time apart (due_at NULL: nothing claims it) and voids a claim in
  // progress: the step it was taking is due again at resume.
  function paused(): RunChange {
    return change('paused', { dueAt: null, pausedDueAt: run.claimed ? now : (run.dueAt ?? null), pausedFrom: from });
  }

  // Resuming gives the due time back (now, if it has passed; a run waiting for its send is due
  // now too: the engine finds the send under way, or sends it again with its id). A run
  // without steps has none.
  function resumed(): RunChange {
    const kept = run.pausedDueAt ?? null;
    const dueAt = run.currentStepId ? (kept && kept > now ? kept : now) : null;
    return change(run.pausedFrom === 'pending' ? 'pending' : 'running', { dueAt, pausedDueAt: null, pausedFrom: null });
  }
}

// An active run ending, whatever it was doing: the same change for every active run, so that
// set-based writers (an unenroll, an exit rule met by a batch) ask once for all of them. Nothing
// is due for it any more, a claim on it is void, and its step (where it failed) stays named.
// reason undefined: a runner's transition, which keeps whatever reason the run had.
export function endState(end: { status: 'cancelled' | 'failed' | 'completed'; reason: string | null | undefined }, now: Date): Omit<RunChange, 'from'> {
  const set: Partial<RunColumns> = { status: end.status, stepStartedAt: null, dueAt: null, pausedDueAt: null, pausedFrom: null, completedAt: now };
  if (end.status === 'completed' && end.reason === null) set.currentStepId = null;
  if (end.reason !== undefined) set.reason = end.reason === null ? null : clip(end.reason);
  return { to: end.status, set, keepClaim: false };
}

// A change as an UPDATE's SET clause and its values (updated_at included): set-based writers
// send one statement for all the runs one answer covers.
export function runChangeSql(change: Pick<RunChange, 'set' | 'keepClaim'>, now: Date): { set: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const { set } = change;
  const column = (name: string, value: unknown) => {
    parts.push(`${name} = ?`);
    values.push(value);
  };
  if (set.status !== undefined) column('status', set.status);
  if (set.version !== undefined) column('version', set.version);
  if (set.currentStepId !== undefined) column('current_step_id', set.currentStepId);
  if (set.visit === 'next') parts.push('visit = visit + 1');
  else if (set.visit !== undefined) {
    parts.push('visit = visit + ?');
    values.push(Math.floor(set.visit));
  }
  if (set.attempt !== undefined) column('attempt', set.attempt);
  if (set.stepStartedAt !== undefined) column('step_started_at', set.stepStartedAt);
  if (set.dueAt !== undefined) column('due_at', set.dueAt);
  if (set.pausedDueAt !== undefined) column('paused_due_at', set.pausedDueAt);
  if (set.pausedFrom !== undefined) column('paused_from', set.pausedFrom);
  if (set.completedAt !== undefined) column('completed_at', set.completedAt);
  if (set.reason !== undefined) column('reason', set.reason);
  if (!change.keepClaim) parts.push('claim_token = NULL');
  // Due now with its claim kept (a released run): claimable now, as its due time says.
  else if (set.dueAt !== undefined) parts.push('lease_until = NULL');
  column('updated_at', now);
  return { set: parts.join(', '), values };
}

// Whether a change writes anything (a retry's run waits on, unchanged).
export function changesRun(change: RunChange): boolean {
  return Object.keys(change.set).some((key) => key !== 'status') || change.to !== change.from;
}

// The reason columns hold 500 characters: a long error is cut, never a failed record.
export function clip(text: string): string;
export function clip(text: string | null): string | null;
export function clip(text: string | null): string | null {
  return text === null || text.length <= 500 ? text : `${text.slice(0, 499)}…`;
}
