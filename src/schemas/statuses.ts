// The status vocabularies that schemas (the API's contracts) and services share. They live
// here, with the contracts, and not with any table's code: a service imports them from here,
// and the database stores the same strings.

export const SEQUENCE_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];

export const RUN_STATUSES = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
// A contact has at most one run in these per sequence (a unique index holds it).
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'paused'];

export const SUBSCRIPTION_STATUSES = ['subscribed', 'unsubscribed'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

// An integration key (a shop plugin, a CRM sync) may call the public API; a runner key may also
// move runs by hand (the internal runs.transition procedure).
export const API_KEY_KINDS = ['integration', 'runner'] as const;
export type ApiKeyKind = (typeof API_KEY_KINDS)[number];
