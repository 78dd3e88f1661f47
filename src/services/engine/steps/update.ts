import type { StepOf } from '../../../schemas/sequence-definition';
import { deepMerge } from '../../contacts/contact-state';
import type { StepInput, StepOutcome } from './step-outcome';

// update: custom fields deep-merged, as an upsert merges them.
export function runUpdate({ step }: StepInput<StepOf<'update'>>): StepOutcome {
  return { kind: 'change', change: (contact) => ({ ...contact, customFields: deepMerge(contact.customFields, step.customFields) }) };
}
