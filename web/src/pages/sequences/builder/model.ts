import type { Step } from '../step-words';

// The builder's working copy of a sequence's steps. Each step has a key of its own for React
// and for the forms' local text, so that editing a step's id, reordering or duplicating keeps
// each form with its step.

export type StepType = Step['type'];
export interface Row {
  key: string;
  step: Step;
}

export const STEP_TYPE_NAMES: ReadonlyArray<readonly [StepType, string]> = [
  ['wait', 'Wait'],
  ['wait_for', 'Wait for an activity'],
  ['email', 'Email'],
  ['whatsapp', 'WhatsApp message'],
  ['tag', 'Tag'],
  ['update', 'Update fields'],
  ['webhook', 'Webhook'],
  ['branch', 'Branch'],
  ['split', 'Split (A/B test)'],
  ['exit', 'Exit'],
];

let counter = 0;
export const newKey = () => `row-${++counter}`;

export function toRows(steps: readonly Step[]): Row[] {
  return steps.map((step) => ({ key: newKey(), step }));
}

// An id no step has yet: the type, numbered ("email-2").
export function freeId(base: string, taken: ReadonlySet<string>): string {
  const stem = base.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 56) || 'step';
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) if (!taken.has(`${stem}-${n}`)) return `${stem}-${n}`;
}

// A branch's condition before one is chosen: no kind yet, so the form asks for one.
export const NO_CONDITION = {} as Extract<Step, { type: 'branch' }>['if'];

// A new step of a type, filled so that it is valid as it stands where it can be (a webhook needs
// an endpoint; a branch's condition and paths are left to choose): the form then shows what is
// missing.
export function newStep(type: StepType, rows: readonly Row[], endpointId: string | undefined): Step {
  const ids = new Set(rows.map((row) => row.step.id));
  const id = freeId(type, ids);
  const first = rows[0]?.step.id ?? id;
  switch (type) {
    case 'wait':
      return { id, type, duration: 'P1D' };
    case 'tag':
      return { id, type, add: ['tagged'] };
    case 'update':
      return { id, type, customFields: { plan: 'pro' } };
    case 'webhook':
      return { id, type, endpointId: endpointId ?? '' };
    case 'email':
      return { id, type, subject: 'Hello {{ contact.firstName | default: "there" }}', html: '<p>Hello {{ contact.firstName | default: "there" }},</p>\n<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };
    case 'whatsapp':
      return { id, type, template: { name: 'hello_world', language: { code: 'en_US' } } };
    case 'branch':
      // Its condition and both paths are the marketer's to choose: a guess ("vip", the first step)
      // saved unnoticed would send runs round in a loop. Saving them empty is refused at the fields.
      return { id, type, if: NO_CONDITION, then: '', else: '' };
    case 'wait_for':
      // The timeout path needs a step: the first one stands in until the form names another.
      return { id, type, activity: 'checkout_completed', timeout: 'P1D', onTimeout: first };
    case 'split':
      return {
        id,
        type,
        variants: [
          { id: 'a', weight: 50, next: first },
          { id: 'b', weight: 50, next: first },
        ],
      };
    case 'exit':
      return { id, type };
    default:
      // A type the builder has no form for (a select edited in the page): sent as it is, for the
      // API's schemas to refuse with their message.
      return { id, type } as Step;
  }
}

export function duplicate(rows: readonly Row[], index: number): Row[] {
  const ids = new Set(rows.map((row) => row.step.id));
  const original = rows[index]!.step;
  const copy = { ...structuredClone(original), id: freeId(`${original.id}-copy`, ids) } as Step;
  return [...rows.slice(0, index + 1), { key: newKey(), step: copy }, ...rows.slice(index + 1)];
}

export function move(rows: readonly Row[], index: number, by: -1 | 1): Row[] {
  const to = index + by;
  if (to < 0 || to >= rows.length) return [...rows];
  const next = [...rows];
  [next[index], next[to]] = [next[to]!, next[index]!];
  return next;
}

// JSON with its keys sorted: two steps are the same whatever their key order.
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

// A step as it is sent: optional texts left empty are left out, as the API means "absent".
export function cleaned(step: Step): Step {
  const copy: Record<string, unknown> = { ...step };
  for (const field of ['text', 'from', 'replyTo']) if (copy[field] === '') delete copy[field];
  if (step.type === 'wait_for') {
    // No next: the following step; no match: any activity of that name.
    if (step.next === '') delete copy.next;
    if (step.match && Object.keys(step.match).length === 0) delete copy.match;
  }
  if (step.type === 'tag') {
    if (step.add?.length === 0) delete copy.add;
    if (step.remove?.length === 0) delete copy.remove;
  }
  return copy as Step;
}

// What the API said, by step: "steps.2.subject" is step 2's "subject".
export function errorsOfStep(errors: Record<string, string>, index: number): Record<string, string> {
  const prefix = `steps.${index}`;
  const found: Record<string, string> = {};
  for (const [path, message] of Object.entries(errors)) {
    if (path === prefix) found[''] = message;
    else if (path.startsWith(`${prefix}.`)) found[path.slice(prefix.length + 1)] = message;
  }
  return found;
}
