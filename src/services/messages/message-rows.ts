import { toIso, toIsoOrNull } from '../../db/sql/rows';
import type { EventMessageDto, MessageChannel, MessageDto, MessageStatus, MessageSummaryDto } from '../../schemas/message';

// A messages row as the statements read it, and the shapes the API answers made from it.

export const MESSAGE_COLUMNS =
  'id, account_id, contact_id, run_id, run_visit, sequence_id, step_id, test, channel, to_address, subject, status,' +
  ' provider_message_id, error, sent_at, delivered_at, read_at, failed_at, created_at';

export interface MessageRow {
  id: string;
  account_id: string;
  contact_id: string;
  run_id: string | null;
  run_visit: number | string | null;
  sequence_id: string | null;
  step_id: string | null;
  test: number | boolean | string;
  channel: MessageChannel;
  to_address: string;
  subject: string | null;
  status: MessageStatus;
  provider_message_id: string | null;
  error: string | null;
  sent_at: unknown;
  delivered_at: unknown;
  read_at: unknown;
  failed_at: unknown;
  created_at: unknown;
}

export function messageSummaryFromRow(row: MessageRow): MessageSummaryDto {
  return {
    id: row.id,
    channel: row.channel,
    status: row.status,
    to: row.to_address,
    subject: row.subject,
    providerMessageId: row.provider_message_id,
    error: row.error,
  };
}

export function messageFromRow(row: MessageRow): MessageDto {
  return {
    ...messageSummaryFromRow(row),
    runId: row.run_id,
    sequenceId: row.sequence_id,
    stepId: row.step_id,
    // SQLite and MariaDB both keep a boolean as 0/1.
    test: row.test === true || Number(row.test) === 1,
    createdAt: toIso(row.created_at),
    sentAt: toIsoOrNull(row.sent_at),
    deliveredAt: toIsoOrNull(row.delivered_at),
    readAt: toIsoOrNull(row.read_at),
    failedAt: toIsoOrNull(row.failed_at),
  };
}

export function eventMessageFromRow(row: MessageRow): EventMessageDto {
  return { ...messageFromRow(row), contactId: row.contact_id };
}
