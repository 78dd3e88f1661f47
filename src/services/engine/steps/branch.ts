import type { Condition, StepOf } from '../../../schemas/sequence-definition';
import type { ActivitySnapshot } from '../../activities/activity-snapshot';
import { holdsOn } from '../../activities/property-conditions';
import type { ContactState } from '../../contacts/contact-state';
import { canonicalJson } from '../../idempotency/canonical-json';
import type { StepInput, StepOutcome } from './step-outcome';

// branch: one condition on the contact; the execution records which way it went.
// A property condition reads the run's trigger (the activity that started it); a run started by
// the API has none, so such a condition does not hold (but `exists: false` does).
export function runBranch({ step, contact, run }: StepInput<StepOf<'branch'>>): StepOutcome {
  const held = holds(step.if, contact, run.trigger);
  const to = held ? step.then : step.else;
  return { kind: 'next', to, detail: { took: held ? 'then' : 'else', to } };
}

export function holds(condition: Condition, contact: ContactState, trigger: ActivitySnapshot | null): boolean {
  if ('property' in condition) return holdsOn(condition, trigger?.properties ?? {});
  if ('tag' in condition) return contact.tags.includes(condition.tag);
  if ('channel' in condition) {
    const status = condition.channel === 'email' ? contact.emailSubscriptionStatus : contact.whatsappSubscriptionStatus;
    return status === condition.status;
  }
  const value = fieldValue(contact.customFields, condition.field);
  if ('exists' in condition) return (value !== undefined) === condition.exists;
  return value !== undefined && canonicalJson(value) === canonicalJson(condition.equals);
}

// `address.city` reaches into objects; a name with no dot is the field itself.
function fieldValue(fields: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(fields, path)) return fields[path];
  let value: unknown = fields;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
