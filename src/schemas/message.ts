import { z } from 'zod';
import { cursorSchema, limitSchema, nextCursorSchema } from './list';

// The messages a step sends (docs/messages.md): their statuses, their order, and the shapes the
// API answers (the contact's messages list, the run timeline's `message`, the message events).

export const MESSAGE_CHANNELS = ['email', 'whatsapp'] as const;
export type MessageChannel = (typeof MESSAGE_CHANNELS)[number];

export const MESSAGE_STATUSES = [
  'queued',
  'sending',
  'sent',
  'captured',
  'unconfirmed',
  'delivered',
  'read',
  'failed',
  'bounced',
  'complained',
  'skipped',
  'cancelled',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

// Why a step sent nothing (the message's `error` holds it).
// `suppressed`: the address is on the account's suppression list (docs/channels.md "Deliverability").
export const SKIP_REASONS = ['unsubscribed', 'no_phone', 'invalid_phone', 'no_email', 'suppressed'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

// What a provider reports about a message it accepted (the WhatsApp status webhook).
export const PROVIDER_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type ProviderStatus = (typeof PROVIDER_STATUSES)[number];

// The order statuses move in: a status applies only to a message whose status ranks lower
// (src/services/messages/message-status-sql.ts writes it as SQL). `failed` ranks between
// `delivered` and `read`: a failure reported after `sent` or `delivered` applies, one reported
// after `read` does not (the person read it), and a late `delivered` never undoes a `failed`
// or a `read`. `skipped` and `cancelled` end a message that was never handed to a provider;
// `captured` (written to the data folder, no provider) ranks as `sent`, and so does
// `unconfirmed` (the relay's answer to the final dot never came, twice: it may have the message,
// so a later report of it still applies). `bounced` ranks as `failed` (a hard bounce, at once or
// reported later); `complained` ranks above `read` (a recipient reports a message they opened).
export const MESSAGE_STATUS_RANK: Record<MessageStatus, number> = {
  queued: 0,
  sending: 1,
  sent: 2,
  captured: 2,
  unconfirmed: 2,
  delivered: 3,
  failed: 4,
  bounced: 4,
  read: 5,
  complained: 6,
  skipped: 9,
  cancelled: 9,
};

const id = (description: string, example: string | null) => z.string().describe(description).meta({ example });
const instant = (description: string, example: string | null) => z.string().nullable().describe(description).meta({ example });

// What a run's timeline shows of the message its step sent.
export const messageSummarySchema = z
  .object({
    id: id('UUID of the message.', '01938a3e-5b2c-7d4e-9f10-2a3b4c5d6e7f'),
    channel: z.enum(MESSAGE_CHANNELS),
    status: z
      .enum(MESSAGE_STATUSES)
      .describe(
        'queued, sending, then sent (the provider took it) or captured (no provider configured: written to the data ' +
          'folder\'s outbox/), then delivered and read as the provider reports them; failed, skipped (nothing sent: ' +
          '`error` says why) or cancelled.',
      ),
    to: z.string().describe('The address it went to: an email address, or the phone number in E.164 digits.').meta({ example: 'ada@example.com' }),
    subject: z.string().nullable().describe('An email\'s subject; null for WhatsApp.').meta({ example: 'Welcome, Ada' }),
    providerMessageId: z
      .string()
      .nullable()
      .describe('The provider\'s id of the message (WhatsApp\'s `wamid.…`), once it has one.')
      .meta({ example: null }),
    error: z
      .string()
      .nullable()
      .describe(
        'Why it failed, in our words with the codes (`bounced: 550 5.1.1 no such mailbox`, `rejected: 554 5.7.1 …`, `131026: …`), why a queued one waits (`paused: …`), or why it was skipped ' +
          '(`unsubscribed`, `no_phone`, `invalid_phone`, `no_email`).',
      )
      .meta({ example: null }),
  })
  .meta({ id: 'MessageSummary' });
export type MessageSummaryDto = z.infer<typeof messageSummarySchema>;

export const messageSchema = messageSummarySchema
  .extend({
    runId: id('UUID of the run whose step sent it; null for a test send.', '01938a3e-4a1b-7c2d-8e3f-4a5b6c7d8e9f').nullable(),
    sequenceId: id('UUID of the sequence.', '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b').nullable(),
    stepId: id('The step that sent it.', 'welcome-email').nullable(),
    test: z.boolean().describe('A test send, not a step of a run.').meta({ example: false }),
    createdAt: z.string().describe('When the step queued it.').meta({ example: '2026-11-22T09:30:00.000Z' }),
    sentAt: instant('When the provider took it (or it was captured).', '2026-11-22T09:30:00.412Z'),
    deliveredAt: instant('When the provider reported it delivered.', null),
    readAt: instant('When the provider reported it read.', null),
    failedAt: instant('When it failed.', null),
  })
  .meta({ id: 'Message' });
export type MessageDto = z.infer<typeof messageSchema>;

// A message in an event: with its contact.
export const eventMessageSchema = messageSchema
  .extend({ contactId: id('UUID of the contact it was sent to.', '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f') })
  .meta({ id: 'EventMessage' });
export type EventMessageDto = z.infer<typeof eventMessageSchema>;

export const messageListInputSchema = z.strictObject({
  id: z.string().describe('The contact id (UUID).'),
  limit: limitSchema,
  cursor: cursorSchema,
});

export const messageListOutputSchema = z.object({ messages: z.array(messageSchema), nextCursor: nextCursorSchema });
