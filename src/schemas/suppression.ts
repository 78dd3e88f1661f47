import { z } from 'zod';
import { MESSAGE_CHANNELS } from './message';
import { cursorSchema, limitSchema, nextCursorSchema } from './list';

// Suppressions (docs/channels.md "Deliverability"): the addresses an account never sends to on a
// channel, whoever the contact is. Keyed by the address, not the contact: deleting and
// re-creating a contact does not lift one. An email address is stored normalized as contacts'
// are (trimmed, NFC, lower case); a phone number in E.164 with its `+` (`+4915112855001`).

export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'opt_out', 'invalid', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const suppressionChannelSchema = z.enum(MESSAGE_CHANNELS).describe('email or whatsapp.');

export const suppressionReasonSchema = z
  .enum(SUPPRESSION_REASONS)
  .describe(
    'hard_bounce (a receiving server refused the address for good), complaint (the recipient reported a message as spam), ' +
      'unsubscribe, opt_out (a WhatsApp STOP or Meta\'s marketing opt-out), invalid (the number cannot receive messages), ' +
      'manual (added by hand, through the API or by a signed-in user).',
  );

export const suppressionSchema = z
  .object({
    channel: suppressionChannelSchema,
    address: z
      .string()
      .describe('The address as stored: an email normalized as contacts\' are, or a phone number in E.164 with its +.')
      .meta({ example: 'ada@example.com' }),
    reason: suppressionReasonSchema,
    source: z
      .string()
      .nullable()
      .describe(
        'What suppressed it: `message:<id>` (a bounce or complaint of that message), `provider:<event>`, `user:<id>` (a signed-in user), ' +
          '`api_key:<id>` (the API), `cli` (the admin command line).',
      )
      .meta({ example: 'message:01938a3e-5b2c-7d4e-9f10-2a3b4c5d6e7f' }),
    createdAt: z.string().describe('When it was added, ISO 8601 UTC.').meta({ example: '2026-12-01T09:30:00.000Z' }),
  })
  .meta({ id: 'Suppression' });
export type SuppressionDto = z.infer<typeof suppressionSchema>;

export const MAX_SUPPRESSIONS_PER_REQUEST = 1000;

export const suppressionListInputSchema = z.strictObject({
  channel: suppressionChannelSchema.optional(),
  reason: suppressionReasonSchema.optional(),
  address: z
    .string()
    .trim()
    .min(1, 'address must not be empty')
    .max(320, 'address must be at most 320 characters')
    .optional()
    .describe('Only this address, normalized as stored first (`Ada@Example.com` finds `ada@example.com`, `+49 151 1285 5001` finds `+4915112855001`).'),
  limit: limitSchema,
  cursor: cursorSchema,
});

export const suppressionListOutputSchema = z.object({ suppressions: z.array(suppressionSchema), nextCursor: nextCursorSchema });

const addressInput = z
  .string()
  .min(1, 'address must not be empty')
  .max(320, 'address must be at most 320 characters')
  .describe('An email address (stored normalized as contacts\' are) or a phone number in international form (stored in E.164 with its +).');

export const suppressionItemSchema = z.strictObject({
  channel: suppressionChannelSchema,
  address: addressInput.meta({ example: 'Ada@Example.com' }),
  reason: suppressionReasonSchema.optional().describe('Defaults to manual.'),
});

export const suppressionAddInputSchema = z.strictObject({
  suppressions: z
    .array(suppressionItemSchema)
    .min(1, 'Give at least one suppression')
    .max(MAX_SUPPRESSIONS_PER_REQUEST, `At most ${MAX_SUPPRESSIONS_PER_REQUEST.toLocaleString('en')} suppressions per request`),
});

export const suppressionAddOutputSchema = z.object({
  summary: z.object({
    total: z.number().int().describe('Items in the request.').meta({ example: 3 }),
    added: z.number().int().describe('Addresses added to the list now.').meta({ example: 2 }),
    existing: z.number().int().describe('Items whose address was on the list already (or earlier in the same request): left as they were.').meta({ example: 1 }),
  }),
});

// GET and DELETE /suppressions/{channel}/{address}: the address percent-encoded in the path.
export const suppressionKeySchema = z.strictObject({
  channel: suppressionChannelSchema,
  address: addressInput.describe('The address, percent-encoded (`%40` for `@`, `%2B` for `+`); normalized as stored before the lookup.'),
});
