import { exitWhenSchema, sendingWindowSchema, stepsInputSchema } from '../../../../../src/schemas/sequence-definition';

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
  return result.success ? {} : byPath('steps', result.error.issues);
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
