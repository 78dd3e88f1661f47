// Every event type (src/schemas/event.ts) may be subscribed to. webhook.test goes to the one
// endpoint it was asked for, whatever its filter; every other type follows the filter.

export const ALWAYS_SENT: readonly string[] = ['webhook.test'];
