import { STEP_TYPES, stepInputSchema, type Step } from '../../schemas/sequence-definition';
import { stateFromRow } from '../contacts/contact-row';
import { exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import type { RunResult } from './record-batch';
import type { ClaimedRun } from './run-queue';
import { isInsideWindow, nextOpening } from './schedule/sending-window';
import { runTimeZone } from './schedule/zones';
import { actsOutward, runStep } from './steps/run-step';

// What a claimed run does now, decided from the run, its version's steps and its contact as
// read at the claim. In this order: a sequence that is not active sets the run aside; an exit
// rule that holds cancels it; a step that acts (tag, update, webhook, email, whatsapp) outside the sending
// window waits for its opening; otherwise the step runs. Nothing is written here.
//
// Stored data this version cannot use throws (plan-batch.ts fails that run alone, "cannot
// plan: …"): a step whose type or fields it does not know, a time it cannot compute.
export function planRun(run: ClaimedRun, steps: readonly Step[] | undefined, now: Date): RunResult {
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
  const outcome = runStep({ step, steps, contact, begun: run.stepStartedAt !== null, now, zone });
  if (outcome.kind === 'sleep') aTime(outcome.until, `the end of step "${step.id}"`);
  return { run, kind: 'step', step, steps, outcome };
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
