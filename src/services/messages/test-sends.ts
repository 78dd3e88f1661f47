import type { Database } from '../../db/database';
import { RateLimitedError } from '../../errors/app-errors';
import type { NewEventOf } from '../../schemas/event';
import type { StepInput } from '../../schemas/sequence-definition';
import type { ChannelSettings } from '../channels/channel-settings';
import type { SmtpTransports } from './smtp-transports';

// The message editor's "Send a test" (docs/dashboard.md), for either channel: the step as
// edited, rendered for the preview's contact exactly as preview-message.ts renders it, sent once
// to the address typed (an email address, or a phone number for WhatsApp) through the account's
// sender (send-test-message.ts). The channels' own halves are send-test-email.ts and
// send-test-whatsapp.ts; what they share (the limit, the result, the store's options) is here.

export interface TestSendDeps {
  transports: SmtpTransports;
  // DATA_DIR/outbox, as the engine's.
  outboxDir: string;
  // The limit's store: the dashboard's shared sliding log (src/http/rate-limit), by account.
  log: { hit(key: string, windowMs: number, limit: number): Promise<{ hits: number; oldestMs: number }> };
  limitPerMinute: number;
  now: () => Date;
  // The bound on the one call to Graph (a WhatsApp test), from its start to its answer's end.
  whatsappTimeoutMs?: number;
}

export const DEFAULT_TEST_SENDS_PER_MINUTE = 10;

export interface TestSendInput {
  accountId: string;
  sequenceId: string;
  stepId: string;
  contactId: string;
  draft?: StepInput;
  to: string;
}

export interface TestSendResult {
  messageId: string;
  channel: 'email' | 'whatsapp';
  status: 'sent' | 'captured';
  // The address it went to: an email address, or a WhatsApp number in E.164 digits.
  to: string;
  // An email's subject; null for WhatsApp.
  subject: string | null;
  // The server's answer ("250 Ok: queued as …", or Graph's message id), when it was sent.
  response: string | null;
  // Where the .eml or .whatsapp.json file was written, when it was captured.
  captured: string | null;
}

// One test send counted for the account; over the limit a 429, before anything is written.
export async function countTestSend(deps: TestSendDeps, accountId: string): Promise<void> {
  const { hits, oldestMs } = await deps.log.hit(`test-send:${accountId}`, 60_000, deps.limitPerMinute);
  if (hits > deps.limitPerMinute) {
    const seconds = Math.max(1, Math.ceil((oldestMs + 60_000 - Date.now()) / 1000));
    throw new RateLimitedError(`At most ${deps.limitPerMinute} test sends a minute: try again in ${seconds} s`);
  }
}

// The store's options for a test's changes: events are collected and dropped, as a test is no
// message of a sequence's.
export function quietly(deps: TestSendDeps): { now: Date; events: Map<string, NewEventOf[]> } {
  return { now: deps.now(), events: new Map() };
}
