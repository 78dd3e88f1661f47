import { parseJson, toIso } from '../../db/sql/rows';
import type { ListedActivity } from '../../schemas/activity';

// The activities table (db/migrations/20261226000000-create-activities.js) as its readers see it.

export const ACTIVITY_COLUMNS = ['row_id', 'account_id', 'id', 'contact_id', 'name', 'properties', 'occurred_at', 'received_at'] as const;

export interface ActivityRow {
  row_id: string;
  id: string;
  contact_id: string;
  name: string;
  properties: unknown;
  occurred_at: unknown;
  received_at: unknown;
}

export function listedActivity(row: ActivityRow): ListedActivity {
  return {
    id: row.id,
    name: row.name,
    properties: parseJson<Record<string, unknown>>(row.properties),
    occurredAt: toIso(row.occurred_at),
    receivedAt: toIso(row.received_at),
  };
}
