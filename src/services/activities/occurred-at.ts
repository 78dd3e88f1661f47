import type { ActivitySettings } from './activity-settings';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
// How far ahead of the server's clock a client's clock may be.
export const MAX_AHEAD_MS = 24 * HOUR_MS;

// occurredAt's bounds against the server's clock: at most 24 h ahead, and within the retention
// (an activity older than that would be pruned at once). The problem, or null.
export function occurredAtProblem(occurredAt: Date, now: Date, settings: Pick<ActivitySettings, 'retentionDays'>): string | null {
  if (occurredAt.getTime() > now.getTime() + MAX_AHEAD_MS) return 'Must be at most 24 hours ahead of the server\'s clock';
  if (occurredAt.getTime() < now.getTime() - settings.retentionDays * DAY_MS) {
    return `Must not be older than the retention (${settings.retentionDays} days)`;
  }
  return null;
}

export function retentionStart(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * DAY_MS);
}

