import type { Step, StepOf } from '../../../schemas/sequence-definition';
import { runBranch } from './branch';
import { runExit } from './exit';
import { runTag } from './tag';
import { runUpdate } from './update';
import { runWait } from './wait';
import type { StepInput, StepOutcome } from './step-outcome';

// The steps that need nothing outside the service. (webhook is the one that does: it is
// carried out in two transactions around its request, src/services/engine/webhook-step.ts.)
export function runLocalStep(input: StepInput): StepOutcome {
  const { step } = input;
  switch (step.type) {
    case 'wait':
      return runWait(input as StepInput<StepOf<'wait'>>);
    case 'tag':
      return runTag(input as StepInput<StepOf<'tag'>>);
    case 'update':
      return runUpdate(input as StepInput<StepOf<'update'>>);
    case 'branch':
      return runBranch(input as StepInput<StepOf<'branch'>>);
    case 'exit':
      return runExit();
    case 'webhook':
      throw new Error('webhook steps are not local');
    // Defined and previewed, not yet sent: until the sender exists a run that reaches one fails
    // with this reason (plan-batch.ts: "cannot plan: ..."), rather than pass it silently.
    case 'email':
    case 'whatsapp':
      throw new Error(`${step.type} steps are not sent by this version of the service`);
  }
}

// Steps that act on the contact or outside the service: they wait for the sending window.
export function actsOutward(step: Step): boolean {
  return step.type === 'tag' || step.type === 'update' || step.type === 'webhook' || step.type === 'email' || step.type === 'whatsapp';
}
