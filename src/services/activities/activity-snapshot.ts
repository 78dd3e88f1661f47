import { parseJson } from '../../db/sql/rows';

// An activity as a run keeps it (docs/activities.md "What a run reads"): the one that started it,
// `trigger`, and the one that last ended one of its wait_for steps, `waited`. Kept on the run as
// JSON, a copy: a run outlives the activities' retention, and its templates still read them.
export interface ActivitySnapshot {
  id: string;
  name: string;
  properties: Record<string, unknown>;
  occurredAt: string;
}

// The one a wait_for step matched, with the run's visit at that step: only that visit's step
// reads it as its match (a later wait_for of the same run is not matched by it).
export interface WaitedActivity extends ActivitySnapshot {
  visit: number;
}

export function snapshotText(activity: ActivitySnapshot): string {
  return JSON.stringify({ id: activity.id, name: activity.name, properties: activity.properties, occurredAt: activity.occurredAt });
}

export function waitedText(activity: ActivitySnapshot, visit: number): string {
  return JSON.stringify({ id: activity.id, name: activity.name, properties: activity.properties, occurredAt: activity.occurredAt, visit });
}

// A stored snapshot, or null for none (or one that does not parse: a template reads it as empty
// rather than fail the run).
export function readSnapshot<T extends ActivitySnapshot = ActivitySnapshot>(text: string | null | undefined): T | null {
  if (text === null || text === undefined || text === '') return null;
  try {
    const value = parseJson<T>(text);
    return value && typeof value === 'object' && typeof value.id === 'string' ? value : null;
  } catch {
    return null;
  }
}

// What templates read: `trigger.properties.cartId`, `waited.name`. Absent: an empty object, so
// every `trigger.*` renders empty.
export function templateActivity(activity: ActivitySnapshot | null): Partial<ActivitySnapshot> {
  if (!activity) return {};
  return { id: activity.id, name: activity.name, properties: activity.properties, occurredAt: activity.occurredAt };
}
