import type { StepOf } from '../../../schemas/sequence-definition';
import { uniqueTags } from '../../contacts/contact-state';
import type { StepInput, StepOutcome } from './step-outcome';

// tag: as add-tags and remove-tags do it (new tags appended in order), in one change.
export function runTag({ step }: StepInput<StepOf<'tag'>>): StepOutcome {
  const removed = new Set(step.remove ?? []);
  return {
    kind: 'change',
    change: (contact) => ({ ...contact, tags: uniqueTags([...contact.tags, ...(step.add ?? [])]).filter((tag) => !removed.has(tag)) }),
  };
}
