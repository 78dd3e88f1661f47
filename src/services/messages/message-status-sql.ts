import { MESSAGE_STATUS_RANK, type MessageStatus } from '../../schemas/message';

// The status order (src/schemas/message.ts) as SQL, so that a change applies in the statement
// that writes it, on the row as the database has it: never a status read, compared in the
// process and written back, which two writers could interleave.

// The rank of the row's status; 99 for a status this code does not know (it never moves).
export const STATUS_RANK_SQL = `(CASE status ${Object.entries(MESSAGE_STATUS_RANK)
  .map(([status, rank]) => `WHEN '${status}' THEN ${rank}`)
  .join(' ')} ELSE 99 END)`;

// Skipped and cancelled end a message no provider was given (queued or sending, and no further);
// every other status applies to a message whose status ranks lower.
export function movableTo(target: MessageStatus): string {
  if (target === 'skipped' || target === 'cancelled') return "status IN ('queued', 'sending')";
  return `${STATUS_RANK_SQL} < ${MESSAGE_STATUS_RANK[target]}`;
}

// A message the provider has (or had): sent, captured, unconfirmed, delivered, failed, bounced,
// read or complained.
export const HANDED_OVER_SQL = `${STATUS_RANK_SQL} BETWEEN 2 AND 6`;
