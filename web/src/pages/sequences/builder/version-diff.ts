import { conditionInWords, durationInWords, matchValueInWords, variantShares } from '../step-words';
import { canonical } from './model';

// What changed between two versions' steps, by step id: steps added, removed, and changed
// (the same id, another definition: the fields that differ), and steps that only moved.

type AnyStep = { id: string; type: string } & Record<string, unknown>;

export interface VersionDiff {
  added: AnyStep[];
  removed: AnyStep[];
  // details: the changes in words, for the fields that have words (a wait_for's, a split's,
  // a branch's condition, a message's category, a type); the fields are always named.
  changed: Array<{ id: string; before: AnyStep; after: AnyStep; fields: string[]; details: string[] }>;
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
    if (fields.length > 0) diff.changed.push({ id: step.id, before: was.step, after: step, fields, details: fields.flatMap((field) => fieldChange(field, was.step, step)) });
    if (from !== to) diff.moved.push({ id: step.id, from: was.i + 1, to: now.get(step.id)!.i + 1 });
    if (fields.length === 0 && from === to) diff.unchanged++;
  }
  return diff;
}

type Variant = { id: string; weight: number; next: string };
type MatchValue = string | number | boolean;

// One field's change in words; [] when the step's words before and after say it well enough.
export function fieldChange(field: string, before: AnyStep, after: AnyStep): string[] {
  const was = before[field];
  const now = after[field];
  try {
    switch (field) {
      case 'type':
        return [`type ${String(was)} → ${String(now)}`];
      case 'activity':
        return [`activity ${String(was ?? 'none')} → ${String(now ?? 'none')}`];
      case 'timeout':
        return [`timeout ${durationInWords(String(was))} → ${durationInWords(String(now))}`];
      case 'next':
        return after.type === 'wait_for' ? [`when it comes: ${String(was ?? 'the following step')} → ${String(now ?? 'the following step')}`] : [];
      case 'onTimeout':
        return [`on timeout: ${String(was)} → ${String(now)}`];
      case 'category':
        return [`category ${String(was ?? 'marketing')} → ${String(now ?? 'marketing')}`];
      case 'if':
        return was && now ? [`condition: ${conditionInWords(was as never)} → ${conditionInWords(now as never)}`] : [];
      case 'match':
        return matchChanges((was ?? {}) as Record<string, MatchValue>, (now ?? {}) as Record<string, MatchValue>);
      case 'variants':
        return Array.isArray(was) && Array.isArray(now) ? variantChanges(was as Variant[], now as Variant[]) : [];
      default:
        return [];
    }
  } catch {
    // A step of an older shape, or one the words do not know: its fields are named all the same.
    return [];
  }
}

function matchChanges(was: Record<string, MatchValue>, now: Record<string, MatchValue>): string[] {
  const out: string[] = [];
  for (const [path, value] of Object.entries(now)) {
    if (!(path in was)) out.push(`match ${path} added: ${matchValueInWords(value)}`);
    else if (canonical(was[path]) !== canonical(value)) out.push(`match ${path}: ${matchValueInWords(was[path]!)} → ${matchValueInWords(value)}`);
  }
  for (const path of Object.keys(was)) if (!(path in now)) out.push(`match ${path} removed`);
  return out;
}

// Variants by name: added, removed, their share of the runs and where they go.
function variantChanges(was: readonly Variant[], now: readonly Variant[]): string[] {
  const before = new Map(variantShares(was).map((variant) => [variant.id, variant]));
  const after = new Map(variantShares(now).map((variant) => [variant.id, variant]));
  const out: string[] = [];
  for (const [id, variant] of after) {
    const old = before.get(id);
    if (!old) out.push(`variant ${id} added: ${variant.share} to ${variant.next}`);
    else {
      if (old.share !== variant.share) out.push(`variant ${id}: ${old.share} → ${variant.share}`);
      if (old.next !== variant.next) out.push(`variant ${id} goes to ${old.next} → ${variant.next}`);
    }
  }
  for (const id of before.keys()) if (!after.has(id)) out.push(`variant ${id} removed`);
  return out;
}
