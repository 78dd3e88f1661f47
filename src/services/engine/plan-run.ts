import { ValidationError } from '../../errors/app-errors';
import { STEP_TYPES, stepInputSchema, type Step } from '../../schemas/sequence-definition';
import { stateFromRow } from '../contacts/contact-row';
import { assertWithinLimits, type ContactState } from '../contacts/contact-state';
import { exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import type { ChainEnd, ChainLink } from './chain';
import type { ClaimedRun, RunResult } from './claimed-run';
import { isInsideWindow, nextOpening } from '../runs/schedule/sending-window';
import { runTimeZone } from '../runs/schedule/zones';
import { actsOutward, runStep } from './steps/run-step';
import type { StepOutcome, StepRun } from './steps/step-outcome';

// The most steps one run takes in one pass (its first and the local steps chained after it): a
// sequence of many local steps (up to 100), or a loop of them a stored version could hold, does
// not hold a pass for ever. The run is then left due now at the step it reached.
export const MAX_STEPS_PER_PASS = 25;

// What a claimed run does now, decided from the run, its version's steps and its contact as
// read at the claim. In this order: a sequence that is not active sets the run aside; an exit
// rule that holds cancels it; a step that acts (tag, update, webhook, email, whatsapp) outside the sending
// window waits for its opening; otherwise the step runs. Nothing is written here.
//
// Stored data this version cannot use throws (plan-batch.ts fails that run alone, "cannot
// plan: …"): a step whose type or fields it does not know, a time it cannot compute.
//
// A step that is done here (tag, update, branch, exit, a wait that is over) goes on to the
// run's next steps in the same pass (`chain`), as long as they are local too: each is planned
// as the run's step would be, on the contact as the chain's earlier changes left it, until a
// step waits or sends (its wait begins, its send is queued, with the rest), the run ends, a
// change breaks the contact's limits (the record refuses it), an exit rule holds on the changed
// contact (`after`: cancelled), a step that acts is outside the sending window (`after`:
// deferred to the opening), or MAX_STEPS_PER_PASS steps are planned.
//
// Why the chain is planned here, on the contact as read at the claim, and not at the record on
// the locked contact: the record must know, before it takes any lock, which contacts to lock
// (contacts before runs, ending-runs.ts: a chain that changes the contact or may end locks
// it) and which changes each run makes (batch-exits.ts weighs a contact's runs against each
// other's changes). What the record does with a chain is what it does with one step today: it
// applies the chain's changes in order to the contact as locked (so a write that came after
// the claim is kept, and the limits are checked on what is written; a change they refuse
// fails its step there, after the earlier steps are recorded). What is decided on the read of
// the claim (a branch's way, an exit rule, the window's zone) is what a single step's plan
// decides on it too.
export function planRun(run: ClaimedRun, steps: readonly Step[] | undefined, now: Date, maxSteps = MAX_STEPS_PER_PASS): RunResult {
  if (run.sequenceStatus !== 'active') return { run, kind: 'park' };
  const contact = stateFromRow(run.contact);
  const rule = matchingExitRule(run.exitWhen, contact);
  if (rule) return { run, kind: 'end', status: 'cancelled', reason: exitReason(rule) };
  if (steps !== undefined && !Array.isArray(steps)) throw new Error(`the steps of version ${run.version} are not a list`);
  const step = steps?.find((candidate) => candidate?.id === run.currentStepId);
  if (!steps || !step) return { run, kind: 'end', status: 'failed', reason: `step "${run.currentStepId}" is not in version ${run.version}` };
  assertKnownStep(step);
  const zone = runTimeZone(run.sendingWindow, contact.customFields);
  if (run.sendingWindow && actsOutward(step) && !run.stepStartedAt && !isInsideWindow(now, run.sendingWindow, zone)) {
    return { run, kind: 'defer', until: aTime(nextOpening(now, run.sendingWindow, zone), 'the sending window\'s next opening') };
  }
  const outcome = runStep({ step, steps, contact, begun: run.stepStartedAt !== null, now, zone, run: stepRun(run, 0) });
  if (outcome.kind === 'sleep' || outcome.kind === 'await') aTime(outcome.until, `the end of step "${step.id}"`);
  const { chain, after } = planChain(run, steps, { step, outcome }, contact, now, maxSteps);
  if (chain.length === 0 && !after) return { run, kind: 'step', step, steps, outcome };
  return { run, kind: 'step', step, steps, outcome, chain, after };
}

// The local steps that follow a step that is done, planned in order (see planRun).
function planChain(
  run: ClaimedRun,
  steps: readonly Step[],
  first: ChainLink,
  start: ContactState,
  now: Date,
  maxSteps: number,
): { chain: ChainLink[]; after?: ChainEnd } {
  const chain: ChainLink[] = [];
  let contact = start;
  let link = first;
  for (let taken = 1; ; taken += 1) {
    const { outcome } = link;
    if (outcome.kind !== 'next' && outcome.kind !== 'change') return { chain };
    if (outcome.kind === 'change') {
      contact = outcome.change(contact);
      if (!withinLimits(contact)) return { chain };
    }
    const nextId = outcome.kind === 'next' && outcome.to !== undefined ? outcome.to : followingStep(steps, link.step.id);
    const next = nextId === null ? undefined : steps.find((candidate) => candidate?.id === nextId);
    // The run completes (no next step), or goes to a step its version lacks (the next pass fails it).
    if (!next) return { chain };
    if (outcome.kind === 'change') {
      const rule = matchingExitRule(run.exitWhen, contact);
      if (rule) return { chain, after: { kind: 'exit', reason: exitReason(rule) } };
    }
    if (taken >= maxSteps) return { chain };
    assertKnownStep(next);
    const zone = runTimeZone(run.sendingWindow, contact.customFields);
    if (run.sendingWindow && actsOutward(next) && !isInsideWindow(now, run.sendingWindow, zone)) {
      return { chain, after: { kind: 'defer', until: aTime(nextOpening(now, run.sendingWindow, zone), "the sending window's next opening") } };
    }
    const nextOutcome: StepOutcome = runStep({ step: next, steps, contact, begun: false, now, zone, run: stepRun(run, taken) });
    if (nextOutcome.kind === 'sleep' || nextOutcome.kind === 'await') aTime(nextOutcome.until, `the end of step "${next.id}"`);
    link = { step: next, outcome: nextOutcome };
    chain.push(link);
  }
}

// The run as its step `at` of this pass sees it (0: its own step; a chain's later steps start
// afresh, one visit on each).
function stepRun(run: ClaimedRun, at: number): StepRun {
  return { id: run.id, visit: run.visit + at, stepStartedAt: at === 0 ? run.stepStartedAt : null, trigger: run.trigger, waited: run.waited };
}

function followingStep(steps: readonly Step[], stepId: string): string | null {
  return steps[steps.findIndex((candidate) => candidate?.id === stepId) + 1]?.id ?? null;
}

function withinLimits(contact: ContactState): boolean {
  try {
    assertWithinLimits(contact);
    return true;
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
}

// A step as this version of the service defines it (a stored version is never changed, so a
// step is checked once).
const known = new WeakSet<Step>();

function assertKnownStep(step: Step): void {
  if (known.has(step)) return;
  if (!(STEP_TYPES as readonly unknown[]).includes(step.type)) {
    throw new Error(`step "${step.id}" is of type ${JSON.stringify(step.type)}, which this version of the service does not know`);
  }
  const parsed = stepInputSchema.safeParse(step);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
    throw new Error(`step "${step.id}"${where}: ${issue.message}`);
  }
  known.add(step);
}

function aTime(value: Date, what: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new Error(`${what} is not a time`);
  return value;
}
