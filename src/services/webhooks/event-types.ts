// The event types an endpoint may subscribe to (issue 10). webhook.test goes to the one
// endpoint it was asked for, whatever its filter; every other type follows the filter.
export const EVENT_TYPES = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.subscription_changed',
  'run.created',
  'run.status_changed',
  'webhook.test',
  'webhook.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const ALWAYS_SENT: readonly string[] = ['webhook.test'];
