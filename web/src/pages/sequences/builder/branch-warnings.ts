import type { Step } from '../step-words';

// What the builder says about a branch's paths before saving, without blocking it: both paths to
// one step (the condition then changes nothing), or a path back to this step or an earlier one
// (a loop: runs go round again). A loop can be meant (a reminder every 3 days until a tag comes),
// so it is a warning; the API itself refuses a loop with no wait step on it, at the branch's field.
export function branchWarnings(steps: readonly Step[], index: number): string[] {
  const step = steps[index];
  if (step?.type !== 'branch') return [];
  const place = new Map(steps.map((s, i) => [s.id, i]));
  const name = (id: string) => `${place.get(id)! + 1}. ${id}`;
  const warnings: string[] = [];
  if (step.then !== '' && step.then === step.else && place.has(step.then)) warnings.push(`Both paths go to step ${name(step.then)}: the condition makes no difference.`);
  const paths = step.then === step.else ? [['Both paths', step.then]] : [['The "then" path', step.then], ['The "else" path', step.else]];
  for (const [path, target] of paths) {
    const at = place.get(target!);
    if (at === undefined || at > index) continue;
    warnings.push(`${path} ${path === 'Both paths' ? 'go' : 'goes'} back to step ${name(target!)}${at === index ? ' (this branch)' : ''}: a loop, so runs go round again. Keep it only with a wait on the way (without one, saving is refused).`);
  }
  return warnings;
}
