import type { PropertyCondition } from '../../schemas/sequence-definition';
import { canonicalJson } from '../idempotency/canonical-json';

// Conditions on an activity's properties (docs/activities.md "Conditions on properties"): an
// entry's and a goal's `where`, a branch's `if` on the run's trigger. Equality is JSON's (same
// type and value: "42" is not 42); gt, gte, lt and lte compare numbers with numbers and strings
// with strings (an ISO date-time compares in time order), and a property of another type, or
// missing, holds none of them.

export function holdsOn(condition: PropertyCondition, properties: Record<string, unknown>): boolean {
  const value = propertyAt(properties, condition.property);
  if ('exists' in condition) return (value !== undefined) === condition.exists;
  if (value === undefined) return false;
  if ('equals' in condition) return canonicalJson(value) === canonicalJson(condition.equals);
  if ('in' in condition) return condition.in.some((candidate) => canonicalJson(candidate) === canonicalJson(value));
  const [operator, bound] = orderedOperand(condition);
  if (typeof value !== typeof bound || (typeof value !== 'number' && typeof value !== 'string')) return false;
  const a = value as number | string;
  const b = bound as number | string;
  switch (operator) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}

export function allHold(conditions: readonly PropertyCondition[] | undefined, properties: Record<string, unknown>): boolean {
  return (conditions ?? []).every((condition) => holdsOn(condition, properties));
}

function orderedOperand(condition: PropertyCondition): ['gt' | 'gte' | 'lt' | 'lte', unknown] {
  for (const operator of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (operator in condition) return [operator, (condition as Record<string, unknown>)[operator]];
  }
  throw new Error('a property condition without an operator');
}

// `items.0.sku` reaches into objects and arrays; a key that itself holds a dot is found first.
export function propertyAt(properties: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(properties, path)) return properties[path];
  let value: unknown = properties;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    if (Array.isArray(value)) {
      if (!/^\d+$/.test(part) || Number(part) >= value.length) return undefined;
      value = value[Number(part)];
      continue;
    }
    if (!Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
