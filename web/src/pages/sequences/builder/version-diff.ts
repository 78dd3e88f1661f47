import { canonical } from './model';

// What changed between two versions' steps, by step id: steps added, removed, and changed
// (the same id, another definition: the fields that differ), and steps that only moved.

type AnyStep = { id: string; type: string } & Record<string, unknown>;

export interface VersionDiff {
  added: AnyStep[];
  removed: AnyStep[];
  changed: Array<{ id: string; before: AnyStep; after: AnyStep; fields: string[] }>;
  moved: Array<{ id: string; from: number; to: number }>;
  unchanged: number;
}

export function diffVersions(before: readonly AnyStep[], after: readonly AnyStep[]): VersionDiff {
  const old = new Map(before.map((step, i) => [step.id, { step, i }]));
  const now = new Map(after.map((step, i) => [step.id, { step, i }]));
  const diff: VersionDiff = { added: [], removed: [], changed: [], moved: [], unchanged: 0 };
  for (const step of after) if (!old.has(step.id)) diff.added.push(step);
  for (const step of before) if (!now.has(step.id)) diff.removed.push(step);
  // Places compared among the steps both versions have, so that an insertion moves nothing.
  const keptBefore = before.filter((step) => now.has(step.id)).map((step) => step.id);
  const keptAfter = after.filter((step) => old.has(step.id)).map((step) => step.id);
  for (const step of after) {
    const was = old.get(step.id);
    if (!was) continue;
    const keys = [...new Set([...Object.keys(was.step), ...Object.keys(step)])].sort();
    const fields = keys.filter((key) => canonical(was.step[key]) !== canonical(step[key]));
    const from = keptBefore.indexOf(step.id);
    const to = keptAfter.indexOf(step.id);
    if (fields.length > 0) diff.changed.push({ id: step.id, before: was.step, after: step, fields });
    if (from !== to) diff.moved.push({ id: step.id, from: was.i + 1, to: now.get(step.id)!.i + 1 });
    if (fields.length === 0 && from === to) diff.unchanged++;
  }
  return diff;
}
