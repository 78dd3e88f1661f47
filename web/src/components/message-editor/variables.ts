import type { Completion } from '@codemirror/autocomplete';

// What a message template can read (docs/templates.md "Variables"), as the editor lists them
// and completes them. Custom fields are the account's own: the editor lists those of the
// contact chosen for the preview.
export interface Variable {
  name: string;
  what: string;
}

export const VARIABLE_GROUPS: Array<{ label: string; variables: Variable[] }> = [
  {
    label: 'Contact',
    variables: [
      { name: 'contact.firstName', what: 'First name' },
      { name: 'contact.lastName', what: 'Last name' },
      { name: 'contact.email', what: 'Email address' },
      { name: 'contact.phone', what: 'Phone number' },
      { name: 'contact.tags', what: 'Tags (a list)' },
      { name: 'contact.id', what: 'Contact id' },
      { name: 'contact.emailSubscriptionStatus', what: 'Email subscription' },
      { name: 'contact.createdAt', what: 'When the contact was created' },
    ],
  },
  {
    label: 'Run',
    variables: [
      { name: 'run.id', what: 'Run id' },
      { name: 'run.status', what: 'Run status' },
      { name: 'run.startedAt', what: 'When the run started' },
      { name: 'run.currentStepId', what: 'The step being sent' },
    ],
  },
  {
    label: 'Sequence',
    variables: [
      { name: 'sequence.name', what: 'Sequence name' },
      { name: 'sequence.version', what: 'Version being sent' },
      { name: 'sequence.id', what: 'Sequence id' },
    ],
  },
  { label: 'Links', variables: [{ name: 'unsubscribe_url', what: 'One-click unsubscribe link' }] },
];

// The tops of the paths, for completion after `{{ `.
export const VARIABLE_COMPLETIONS: Completion[] = [
  { label: 'contact', type: 'variable', detail: 'the contact' },
  { label: 'run', type: 'variable', detail: 'the contact\'s run' },
  { label: 'sequence', type: 'variable', detail: 'the sequence' },
  { label: 'unsubscribe_url', type: 'variable', detail: 'one-click unsubscribe link' },
];

// A custom field's paths, nested objects' keys included ("address.city").
export function customFieldPaths(fields: Record<string, unknown> | null | undefined, prefix = 'contact.customFields.'): string[] {
  return Object.entries(fields ?? {}).flatMap(([key, value]) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? customFieldPaths(value as Record<string, unknown>, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

export function liquidOutput(name: string): string {
  return `{{ ${name} }}`;
}
