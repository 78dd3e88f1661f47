import type { ContactState } from '../contacts/contact-state';
import { canonicalJson } from '../idempotency/canonical-json';
import { LruMap } from '../lru-map';
import { plainLiquid, type ParsedTemplate } from '../messages/liquid';
import { templateActivity, type ActivitySnapshot } from './activity-snapshot';
import { propertyAt } from './property-conditions';

// A wait_for step's `match` (docs/sequences.md "Wait for an activity"): property path -> value,
// where a string is a Liquid template rendered for the run when its wait begins (it reads
// `trigger`, `waited`, `contact` and `run.id`), and a number or boolean is itself. An activity
// matches when every path holds its value: a rendered string equals a string property, or the
// text of a number or boolean one (`{{ trigger.properties.orderId }}` renders 1042 as "1042",
// and matches 1042 and "1042"); a number or boolean equals as JSON. A template that renders
// empty (the trigger has no such property) matches nothing: the wait ends at its timeout. Never
// "anything".

export interface MatchContext {
  contact: ContactState;
  trigger: ActivitySnapshot | null;
  waited: ActivitySnapshot | null;
  runId: string;
}

// Rendered match values, or null when one renders empty (the wait matches nothing).
export type MatchValues = Record<string, unknown> | null;

const parsed = new LruMap<string, ParsedTemplate>(2_000);

export function renderMatchValues(match: Record<string, string | number | boolean> | undefined, context: MatchContext): MatchValues {
  const values: Record<string, unknown> = {};
  const scope = {
    contact: context.contact,
    trigger: templateActivity(context.trigger),
    waited: templateActivity(context.waited),
    run: { id: context.runId },
  };
  for (const [path, value] of Object.entries(match ?? {})) {
    if (typeof value !== 'string') {
      values[path] = value;
      continue;
    }
    let template = parsed.get(value);
    if (!template) parsed.set(value, (template = plainLiquid.parse(value)));
    const rendered = String(plainLiquid.renderSync(template, scope)).trim();
    if (rendered === '') return null;
    values[path] = rendered;
  }
  return values;
}

export function matchesValues(values: MatchValues, properties: Record<string, unknown>): boolean {
  if (values === null) return false;
  return Object.entries(values).every(([path, expected]) => {
    const actual = propertyAt(properties, path);
    if (actual === undefined) return false;
    if (typeof expected === 'string') {
      return actual === expected || ((typeof actual === 'number' || typeof actual === 'boolean') && String(actual) === expected);
    }
    return canonicalJson(actual) === canonicalJson(expected);
  });
}
