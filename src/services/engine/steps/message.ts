import type { StepOf } from '../../../schemas/sequence-definition';
import type { StepInput, StepOutcome } from './step-outcome';

// The sending account's one sender per channel: every message of an account on a channel goes
// to the same target, so the outbound layer shares, rates and bounds them together
// (docs/sequences.md "Email and WhatsApp steps").
export const MESSAGE_TARGET = 'sender';

// email and whatsapp: a message queued with the step's begin (and its `queued` row in the
// messages record), sent by the outbound layer (outbound/channels/email.ts, whatsapp.ts). The
// contact's status and address are read again when it goes, not here: an unsubscribe that
// comes while the message waits (a throttle, a retry) is honoured.
export function runMessage({ step }: StepInput<StepOf<'email' | 'whatsapp'>>): StepOutcome {
  return { kind: 'send', channel: step.type, target: MESSAGE_TARGET };
}
