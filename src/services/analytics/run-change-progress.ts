import type { RunChange, RunInput } from '../runs/run-state';
import { isActiveStatus } from '../runs/run-state';
import type { RunProgress } from './progress-counters';

// A run's move as the state machine answered it (runs/run-state.ts), for the counters: the
// step it was active at, the step it is active at after, how it left its step (a step that
// succeeded or failed; an end from outside is told by `ended`), and its end. `left` says how the
// step was left when the input does not: a message step skipped for its contact (unsubscribed,
// no address), which moves the run on as a success does, is `{ outcome: 'skipped', reason }`.
export function progressOfChange(sequenceId: string, stepId: string | null, input: RunInput, change: RunChange, left?: RunProgress['left']): RunProgress {
  const wasActive = isActiveStatus(change.from);
  const isActive = isActiveStatus(change.to);
  const from = wasActive ? stepId : null;
  const to = !isActive ? null : change.set.currentStepId !== undefined ? change.set.currentStepId : stepId;
  const progress: RunProgress = { sequenceId, from, to };
  if (input.kind === 'succeeded') progress.left = { outcome: 'completed' };
  if (input.kind === 'failed') progress.left = { outcome: 'failed' };
  if (left) progress.left = left;
  if (wasActive && !isActive) {
    progress.ended = { status: change.to as 'completed' | 'cancelled' | 'failed', reason: change.set.reason !== undefined ? change.set.reason : null };
  }
  return progress;
}
