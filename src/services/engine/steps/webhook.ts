import type { StepOf } from '../../../schemas/sequence-definition';
import type { StepInput, StepOutcome } from './step-outcome';

// webhook: a signed POST to one of the account's endpoints, sent by the outbound layer
// (src/services/engine/outbound/channels/webhook.ts); the run waits for its outcome.
export function runWebhook({ step }: StepInput<StepOf<'webhook'>>): StepOutcome {
  return { kind: 'send', channel: 'webhook', target: step.endpointId.toLowerCase() };
}
