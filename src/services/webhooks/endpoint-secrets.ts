import { toDate } from '../../db/sql/rows';

// The secrets a request to an endpoint is signed with: its secret, and during the 24 h after a
// rotation the previous one too (docs/webhooks.md "Webhooks").
export function currentSecrets(
  row: { secret: string; previous_secret: string | null; previous_secret_expires_at: unknown },
  now: Date,
): string[] {
  return row.previous_secret && row.previous_secret_expires_at && toDate(row.previous_secret_expires_at) > now
    ? [row.secret, row.previous_secret]
    : [row.secret];
}
