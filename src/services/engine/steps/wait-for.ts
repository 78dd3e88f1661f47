import type { StepOf } from '../../../schemas/sequence-definition';
import { renderMatchValues } from '../../activities/wait-match';
import { addDuration } from '../../runs/schedule/durations';
import type { StepInput, StepOutcome } from './step-outcome';

// wait_for (docs/sequences.md "Wait for an activity"): begun, the run waits for an activity of
// its contact with the step's name and match values, or for the timeout, whichever comes first.
// The match is decided as the activity commits (activities/match-waits.ts), which records the
// activity on the run (`waited`, with this visit) and makes it due now; the timeout is the run's
// ordinary due time. Either way the engine then finds the step begun, and goes on: to `next`
// (or the following step) when this visit's wait was matched, to `onTimeout` once the timeout
// has passed. The execution records which.
export function runWaitFor({ step, contact, run, begun, now, zone }: StepInput<StepOf<'wait_for'>>): StepOutcome {
  if (!begun) {
    const match = renderMatchValues(step.match, { contact, trigger: run.trigger, waited: run.waited, runId: run.id });
    return { kind: 'await', until: addDuration(now, step.timeout, zone), activity: step.activity, match };
  }
  if (run.waited && run.waited.visit === run.visit) {
    return { kind: 'next', to: step.next, detail: { outcome: 'matched', activityId: run.waited.id, activity: run.waited.name } };
  }
  const until = addDuration(run.stepStartedAt ?? now, step.timeout, zone);
  if (now.getTime() >= until.getTime()) return { kind: 'next', to: step.onTimeout, detail: { outcome: 'timed_out' } };
  // Woken before its time (a resumed run, a moved one): it waits on.
  return { kind: 'await', until, activity: step.activity, match: renderMatchValues(step.match, { contact, trigger: run.trigger, waited: run.waited, runId: run.id }) };
}
