import type { ActivitySnapshot } from './activity-snapshot';

// An activity this intake stored (not a duplicate), as the sequences' reactions read it
// (match-waits.ts, meet-goals.ts, enter-sequences.ts): in request order.
export interface StoredActivity extends ActivitySnapshot {
  contactId: string;
  occurredAtDate: Date;
}
