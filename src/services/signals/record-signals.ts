import type { Database } from '../../db/database';
import { ConflictError, ValidationError } from '../../errors/app-errors';
import type { ActivityInput } from '../../schemas/activity';
import type { ActivitySettings } from '../activities/activity-settings';
import { occurredAtProblem } from '../activities/occurred-at';
import { recordActivities } from '../activities/record-activities';

// The engagement signals of our own channels (docs/activities.md "Engagement signals"), recorded
// as the contacts' activities through the intake's one write path (recordActivities: whatever an
// activity enrolls, matches or converts, a signal does too), each in its own transaction after
// the change that caused it has committed. Every signal has an id of its own making
// (`email.opened:<messageId>`, `whatsapp.read:<wamid>`, ...): a webhook posted again, a pixel
// loaded again, a report retried finds the activity stored and records nothing.
//
// What a provider's post or a recipient's request cannot be refused for is never refused here:
// - a contact deleted since (its item dropped, the others recorded);
// - an id already stored with other properties (an open first seen through Apple's proxy, then
//   from the reader's client): the first one stands, this one is dropped;
// - a provider's time past the intake's bounds (older than the retention, over 24 h ahead):
//   recorded at the time it is received.

export interface Signal {
  accountId: string;
  contactId: string;
  // The activity's id: the signal's name and what it is about.
  id: string;
  name: SignalName;
  properties: Record<string, unknown>;
  occurredAt?: Date;
}

export const SIGNAL_NAMES = ['email.opened', 'email.clicked', 'email.bounced', 'whatsapp.read', 'whatsapp.replied'] as const;
export type SignalName = (typeof SIGNAL_NAMES)[number];

// The batch intake's own limit.
const CHUNK = 500;

// How many signals were stored now (not found stored already).
export async function recordSignals(db: Database, signals: readonly Signal[], settings: ActivitySettings): Promise<number> {
  const byAccount = new Map<string, Signal[]>();
  for (const signal of signals) byAccount.set(signal.accountId, [...(byAccount.get(signal.accountId) ?? []), signal]);
  let stored = 0;
  for (const [accountId, list] of [...byAccount].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (let start = 0; start < list.length; start += CHUNK) stored += await recordChunk(db, accountId, list.slice(start, start + CHUNK), settings);
  }
  return stored;
}

async function recordChunk(db: Database, accountId: string, chunk: Signal[], settings: ActivitySettings): Promise<number> {
  let items = chunk.map((signal) => toActivity(signal, settings));
  // Each round drops at least one item, or ends.
  while (items.length > 0) {
    try {
      const recorded = await recordActivities(db, { accountId, activities: items, batch: true }, settings);
      return recorded.filter((activity) => !activity.duplicate).length;
    } catch (error) {
      const dropped = droppedItems(error);
      if (dropped === null || dropped.size === 0) throw error;
      items = items.filter((_item, index) => !dropped.has(index));
    }
  }
  return 0;
}

// The items a refusal names that a signal is dropped for: `activities.N.contact.id` (the
// contact is gone) and `activities.N.id` (stored already, with other properties).
function droppedItems(error: unknown): Set<number> | null {
  if (!(error instanceof ValidationError) && !(error instanceof ConflictError && error.code === 'activity_conflict')) return null;
  const indexes = new Set<number>();
  for (const detail of error.details) {
    const found = /^activities\.(\d+)\.(contact\.id|id)$/.exec(detail.path);
    if (!found) return null;
    indexes.add(Number(found[1]));
  }
  return indexes;
}

function toActivity(signal: Signal, settings: ActivitySettings): ActivityInput {
  const believable = signal.occurredAt && !occurredAtProblem(signal.occurredAt, settings.now(), settings);
  return {
    id: signal.id,
    contact: { id: signal.contactId },
    name: signal.name,
    properties: signal.properties,
    ...(believable ? { occurredAt: signal.occurredAt!.toISOString() } : {}),
  };
}
