import type { StepOutcome } from './step-outcome';

// exit: the run is complete.
export function runExit(): StepOutcome {
  return { kind: 'complete' };
}
