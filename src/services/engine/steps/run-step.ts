import type { Step, StepOf } from '../../../schemas/sequence-definition';
import { runBranch } from './branch';
import { runExit } from './exit';
import { runTag } from './tag';
import { runUpdate } from './update';
import { runWait } from './wait';
import { runMessage } from './message';
import { runWebhook } from './webhook';
import { runSplit } from './split';
import { runWaitFor } from './wait-for';
import type { StepInput, StepOutcome } from './step-outcome';

// Each step type's handler. A step that talks to the outside (webhook, email, whatsapp) answers what to send: the
// outbound layer sends it and records its outcome (src/services/engine/outbound/).
export function runStep(input: StepInput): StepOutcome {
  const { step } = input;
  switch (step.type) {
    case 'wait':
      return runWait(input as StepInput<StepOf<'wait'>>);
    case 'tag':
      return runTag(input as StepInput<StepOf<'tag'>>);
    case 'update':
      return runUpdate(input as StepInput<StepOf<'update'>>);
    case 'wait_for':
      return runWaitFor(input as StepInput<StepOf<'wait_for'>>);
    case 'branch':
      return runBranch(input as StepInput<StepOf<'branch'>>);
    case 'split':
      return runSplit(input as StepInput<StepOf<'split'>>);
    case 'exit':
      return runExit();
    case 'webhook':
      return runWebhook(input as StepInput<StepOf<'webhook'>>);
    case 'email':
    case 'whatsapp':
      return runMessage(input as StepInput<StepOf<'email' | 'whatsapp'>>);
  }
}

// Steps that act on the contact or outside the service: they wait for the sending window.
export function actsOutward(step: Step): boolean {
  return step.type === 'tag' || step.type === 'update' || step.type === 'webhook' || step.type === 'email' || step.type === 'whatsapp';
}
