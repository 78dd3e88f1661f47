import type { StepOf } from '../../../schemas/sequence-definition';
import { addDuration } from '../../runs/schedule/durations';
import { nextUntil } from '../../runs/schedule/until';
import type { StepInput, StepOutcome } from './step-outcome';

// wait: the run sleeps; the engine looks at it again only when the wait is over (its due time
// is the wait's end, and nothing polls it). Begun, then over: the step is done.
export function runWait({ step, begun, now, zone }: StepInput<StepOf<'wait'>>): StepOutcome {
  if (begun) return { kind: 'next' };
  const until = step.duration !== undefined ? addDuration(now, step.duration, zone) : nextUntil(now, step.until!, zone);
  return { kind: 'sleep', until };
}
