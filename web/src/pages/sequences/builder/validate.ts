import { entrySchema, exitWhenSchema, goalSchema, sendingWindowSchema, stepsInputSchema } from '../../../../../src/schemas/sequence-definition';
import type { Step } from '../step-words';

// The API's own zod schemas (src/schemas, which import nothing of the server), run before a
// save: a step of the wrong shape is refused here with the message and path the API's 400 would
// give. The rules that read across steps or need the account (ids unique, branch targets,
// cycles, duration ranges, time zones, templates that parse, endpoints of the account) live in
// src/services/sequences/definition-rules.ts, which needs node:crypto, the database and liquidjs:
// those are the API's to check, and its 400 details are shown at the same fields.

type Issue = { path: PropertyKey[]; message: string };

function byPath(prefix: string, issues: readonly Issue[]): Record<string, string> {
  const found: Record<string, string> = {};
  for (const issue of issues) {
    const path = [prefix, ...issue.path.map(String)].join('.');
    found[path] ??= issue.message;
  }
  return found;
}

export function stepsProblems(steps: unknown): Record<string, string> {
  const result = stepsInputSchema.safeParse(steps);
  const found = result.success ? newStepsProblems(steps as Step[]) : byPath('steps', result.error.issues);
  // A choice not made yet says so, in place of the schema's list of shapes or id rule.
  return Array.isArray(steps) ? { ...found, ...unchosenProblems(steps as Step[]) } : found;
}

// A new branch's condition and paths start empty, to be chosen: saving them so is refused at
// each field, in words that say what to do.
function unchosenProblems(steps: readonly Step[]): Record<string, string> {
  const found: Record<string, string> = {};
  steps.forEach((step, index) => {
    if (step?.type !== 'branch') return;
    const at = (field: string, message: string) => (found[`steps.${index}.${field}`] = `Step "${step.id}": ${message}`);
    if (step.if && typeof step.if === 'object' && Object.keys(step.if).length === 0) at('if', 'choose a condition');
    if (step.then === '') at('then', 'choose the step to go to when the condition holds');
    if (step.else === '') at('else', 'choose the step to go to otherwise');
  });
  return found;
}

// A duration as ISO 8601 writes it, with at least one part ("P", "PT" and "P1DT" are not); the
// range (a second to 366 days) is the API's to check.
const ISO_DURATION = /^P(?!$)(\d+(?:[.,]\d+)?Y)?(\d+(?:[.,]\d+)?M)?(\d+(?:[.,]\d+)?W)?(\d+(?:[.,]\d+)?D)?(T(?=\d)(\d+(?:[.,]\d+)?H)?(\d+(?:[.,]\d+)?M)?(\d+(?:[.,]\d+)?S)?)?$/;
const DURATION_EXAMPLES = 'e.g. PT2H, P3D';

export function durationProblem(text: string): string | null {
  return ISO_DURATION.test(text) ? null : `${JSON.stringify(text)} is not an ISO 8601 duration (${DURATION_EXAMPLES})`;
}

// The API's cross-step rules for wait_for and split steps, with its messages: the steps they go to
// exist, a timeout is a duration, a variant is named once. (A branch's targets, cycles and the
// rest are the API's to find.)
function newStepsProblems(steps: readonly Step[]): Record<string, string> {
  const ids = new Set(steps.map((step) => step.id));
  const found: Record<string, string> = {};
  steps.forEach((step, index) => {
    const at = (field: string, message: string) => {
      found[`steps.${index}.${field}`] ??= `Step "${step.id}": ${message}`;
    };
    const missing = (target: string) => `"${target}" is not a step of this sequence`;
    if (step.type === 'wait_for') {
      const problem = durationProblem(step.timeout);
      if (problem) at('timeout', problem);
      if (step.next !== undefined && !ids.has(step.next)) at('next', missing(step.next));
      if (!ids.has(step.onTimeout)) at('onTimeout', missing(step.onTimeout));
      if (step.next === undefined && index === steps.length - 1) at('next', 'the last step needs a `next`: a matched run has no following step to go to');
    }
    if (step.type === 'split') {
      const named = new Set<string>();
      step.variants.forEach((variant, place) => {
        if (named.has(variant.id)) at(`variants.${place}.id`, `variant "${variant.id}" is named twice`);
        named.add(variant.id);
        if (!ids.has(variant.next)) at(`variants.${place}.next`, missing(variant.next));
      });
    }
  });
  return found;
}

export function entryProblems(entry: unknown): Record<string, string> {
  if (entry === null) return {};
  const result = entrySchema.safeParse(entry);
  if (!result.success) return byPath('entry', result.error.issues);
  const after = typeof result.data.reentry === 'object' ? result.data.reentry.after : undefined;
  const problem = after === undefined ? null : durationProblem(after);
  return problem ? { 'entry.reentry.after': `entry.reentry.after: ${problem}` } : {};
}

export function goalProblems(goal: unknown): Record<string, string> {
  if (goal === null) return {};
  const result = goalSchema.safeParse(goal);
  if (!result.success) return byPath('goal', result.error.issues);
  const problem = result.data.within === undefined ? null : durationProblem(result.data.within);
  return problem ? { 'goal.within': `goal.within: ${problem}` } : {};
}

export function exitRulesProblems(rules: unknown): Record<string, string> {
  const result = exitWhenSchema.safeParse(rules);
  return result.success ? {} : byPath('exitWhen', result.error.issues);
}

export function windowProblems(window: unknown): Record<string, string> {
  if (window === null) return {};
  const result = sendingWindowSchema.safeParse(window);
  return result.success ? {} : byPath('sendingWindow', result.error.issues);
}
