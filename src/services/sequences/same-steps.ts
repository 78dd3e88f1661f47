import type { Step, StepInput } from '../../schemas/sequence-definition';
import { canonicalJson } from '../idempotency/canonical-json';

// When two lists of steps are the same steps (docs/sequences.md "Versions"): the same JSON
// value, whatever the order of keys in a step or in its nested objects (a file, a script or a
// client may spell them in any order), and with ids filled in as the service fills them.

// One spelling of a JSON value: keys sorted, and a key whose value is undefined left out, as
// JSON leaves it out.
export function canonicalText(value: unknown): string {
  return canonicalJson(value === undefined ? null : JSON.parse(JSON.stringify(value)));
}

export function sameSteps(a: readonly Step[], b: readonly Step[]): boolean {
  return canonicalText(a) === canonicalText(b);
}

// A step sent without an id, at the place of a current step that is the same but for its id,
// keeps that step's id (unless the request gives the id to another step).
export function keepIds(steps: readonly StepInput[], current: readonly Step[]): StepInput[] {
  const given = new Set(steps.flatMap((step) => (step.id === undefined ? [] : [step.id])));
  return steps.map((step, index) => {
    const old = current[index];
    if (step.id !== undefined || !old || given.has(old.id)) return step;
    const { id: _id, ...rest } = old;
    return canonicalText(rest) === canonicalText(step) ? { ...step, id: old.id } : step;
  });
}
