import type { Step } from '../../schemas/sequence-definition';
import { stateFromRow } from '../contacts/contact-row';
import { exitReason, matchingExitRule } from '../exit-rules/exit-rules';
import type { RunResult } from './record-batch';
import type { ClaimedRun } from './run-queue';
import { isInsideWindow, nextOpening } from './schedule/sending-window';
import { runTimeZone } from './schedule/zones';
import { actsOutward, runStep } from './steps/run-step';

// What a claimed run does now, decided from the run, its version's steps and its contact as
// read at the claim. In this order: a sequence that is not active sets the run aside; an exit
// rule that holds cancels it; a step that acts (tag, update, webhook) outside the sending
// window waits for its opening; otherwise the step runs. Nothing is written here.
export function planRun(run: ClaimedRun, steps: readonly Step[] | undefined, now: Date): RunResult {
  if (run.sequenceStatus !== 'active') return { run, kind: 'park' };
  const contact = stateFromRow(run.contact);
  const rule = matchingExitRule(run.exitWhen, contact);
  if (rule) return { run, kind: 'end', status: 'cancelled', reason: exitReason(rule) };
  const step = steps?.find((candidate) => candidate.id === run.currentStepId);
  if (!steps || !step) return { run, kind: 'end', status: 'failed', reason: `step "${run.currentStepId}" is not in version ${run.version}` };
  const zone = runTimeZone(run.sendingWindow, contact.customFields);
  if (run.sendingWindow && actsOutward(step) && !run.stepStartedAt && !isInsideWindow(now, run.sendingWindow, zone)) {
    return { run, kind: 'defer', until: nextOpening(now, run.sendingWindow, zone) };
  }
  return { run, kind: 'step', step, steps, outcome: runStep({ step, steps, contact, begun: run.stepStartedAt !== null, now, zone }) };
}
