import type { Step } from '../step-words';

// Where a step leads: on to the following step, or by a jump (a branch's paths, a wait_for's
// next and timeout, a split's variants). The flow draws these; inserting a step rewires them.

// The steps a step may go to other than the following one.
export function jumpsOf(step: Step): string[] {
  if (step.type === 'branch') return [step.then, step.else];
  if (step.type === 'wait_for') return [step.next, step.onTimeout].filter((id): id is string => id !== undefined);
  if (step.type === 'split') return Array.isArray(step.variants) ? step.variants.map((variant) => variant.next) : [];
  return [];
}

// Whether a run may go on from a step to the one after it: not after an exit, a branch or a
// split (they always jump), nor after a wait_for with its own `next` (its timeout jumps too).
export function goesOn(step: Step): boolean {
  if (step.type === 'branch' || step.type === 'exit' || step.type === 'split') return false;
  if (step.type === 'wait_for') return step.next === undefined;
  return true;
}

// The step with its jumps to `from` going to `to` instead; the same object when none did.
export function redirected(step: Step, from: string, to: string): Step {
  if (!jumpsOf(step).includes(from)) return step;
  const swap = (id: string) => (id === from ? to : id);
  if (step.type === 'branch') return { ...step, then: swap(step.then), else: swap(step.else) };
  if (step.type === 'wait_for') return { ...step, onTimeout: swap(step.onTimeout), ...(step.next === undefined ? {} : { next: swap(step.next) }) };
  if (step.type === 'split') return { ...step, variants: step.variants.map((variant) => ({ ...variant, next: swap(variant.next) })) };
  return step;
}

// A new step's jumps all going to `target` (a branch's stay empty, to be chosen).
export function leadingTo(step: Step, target: string): Step {
  if (step.type === 'wait_for') return { ...step, onTimeout: target };
  if (step.type === 'split') return { ...step, variants: step.variants.map((variant) => ({ ...variant, next: target })) };
  return step;
}
