import type { ExitRule, SendingWindow, Step } from '../../schemas/sequence-definition';
import type { ActivitySnapshot, WaitedActivity } from '../activities/activity-snapshot';
import type { RunStatus, SequenceStatus } from '../../schemas/statuses';
import type { ContactRow } from '../contacts/contact-row';
import type { ChainEnd, ChainLink } from './chain';
import type { StepOutcome } from './steps/step-outcome';

// A run as its claim loads it (loadClaimedRuns, run-queue.ts), and what the plan made of it
// (plan-run.ts): the record's input (record-batch.ts). In a module of their own, so the record
// and the modules it asks (batch-exits.ts, ending-runs.ts) import them from here, not from each
// other.
export interface ClaimedRun {
  id: string;
  token: string;
  accountId: string;
  sequenceId: string;
  contactId: string;
  status: RunStatus;
  version: number;
  currentStepId: string;
  visit: number;
  attempt: number;
  stepStartedAt: Date | null;
  startedAt: Date;
  createdAt: Date;
  dueAt: Date;
  sequenceStatus: SequenceStatus;
  exitWhen: ExitRule[];
  sendingWindow: SendingWindow | null;
  contact: ContactRow;
  // The activity that started the run (entry by event), and the one that last ended one of its
  // wait_for steps (docs/activities.md "What a run reads").
  trigger: ActivitySnapshot | null;
  waited: WaitedActivity | null;
  // Why the run's stored rules cannot be read (JSON that does not parse), if they cannot: the
  // run then fails alone when it is planned (plan-batch.ts), not the whole batch as it loads
  // (run-queue.ts).
  unreadable?: string;
}

export type RunResult =
  // The sequence is not active: the run is set aside until it is (no due time).
  | { run: ClaimedRun; kind: 'park' }
  // Outside the sending window: due again at its next opening.
  | { run: ClaimedRun; kind: 'defer'; until: Date }
  // An exit rule holds, or the step is gone: the run ends.
  | { run: ClaimedRun; kind: 'end'; status: 'cancelled' | 'failed'; reason: string }
  // Its step ran: the handler's outcome (steps/). A step done here that the run's next local
  // steps follow in the same pass (plan-run.ts): `chain`, those steps in order, each with its
  // outcome; `after`, what the plan found after the last of them, when it is not that step's
  // own outcome: an exit rule the chain's changes meet, or a window that is closed.
  | { run: ClaimedRun; kind: 'step'; step: Step; steps: readonly Step[]; outcome: StepOutcome; chain?: ChainLink[]; after?: ChainEnd };
