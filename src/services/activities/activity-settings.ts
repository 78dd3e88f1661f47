// What the activity intake needs from the configuration, passed in (src/config.ts reads it).
export interface ActivitySettings {
  // ACTIVITY_RETENTION_DAYS: older activities are refused, and pruned.
  retentionDays: number;
  // The server's clock: occurredAt's bounds and receivedAt. Tests move it.
  now: () => Date;
}

export const DEFAULT_ACTIVITY_RETENTION_DAYS = 90;
export const DEFAULT_ACTIVITY_SETTINGS: ActivitySettings = { retentionDays: DEFAULT_ACTIVITY_RETENTION_DAYS, now: () => new Date() };
