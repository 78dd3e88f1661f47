import type { ActivitySnapshot, WaitedActivity } from '../../activities/activity-snapshot';
import type { ContactState } from '../../contacts/contact-state';
import type { Step } from '../../../schemas/sequence-definition';

// What a step handler answers: a plain value the scheduler records (src/services/engine/
// record-batch.ts). Handlers read the run, the step and the contact, and write nothing.

export interface StepInput<S extends Step = Step> {
  step: S;
  steps: readonly Step[];
  contact: ContactState;
  // Whether this step has already begun (a wait that is now over).
  begun: boolean;
  now: Date;
  // The zone the run's local times are read in (docs/sequences.md "Time zones").
  zone: string;
  run: StepRun;
}

// What of the run a step reads: a split's hash (its id), a wait_for's match (the activity that
// started it, the one a wait matched, and the visit and start of the step).
export interface StepRun {
  id: string;
  visit: number;
  stepStartedAt: Date | null;
  trigger: ActivitySnapshot | null;
  waited: WaitedActivity | null;
}

export type StepOutcome =
  // Done: go on to `to` (a branch's target), or to the next step in the list.
  | { kind: 'next'; to?: string; detail?: Record<string, unknown> }
  // Done, and the run is complete.
  | { kind: 'complete' }
  // Begun: nothing more until `until` (a wait).
  | { kind: 'sleep'; until: Date }
  // Begun: a wait_for, until a matching activity or `until` (its timeout). `match`: the step's
  // match values as rendered for this run (property path -> JSON value).
  // null: a value rendered empty, so nothing can match (the wait ends at its timeout).
  | { kind: 'await'; until: Date; activity: string; match: Record<string, unknown> | null }
  // A change to the contact, made with the run's move in one transaction; then the next step.
  | { kind: 'change'; change: (contact: ContactState) => ContactState }
  // Begun: a send queued in the outbox with the run's move; the run waits for its outcome
  // (src/services/engine/outbound/).
  | { kind: 'send'; channel: SendChannel; target: string };

// The outbound channels a step can send through (src/services/engine/outbound/channels/).
export type SendChannel = 'webhook' | 'email' | 'whatsapp';
