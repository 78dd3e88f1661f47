import { z } from 'zod';
import { SUBSCRIPTION_STATUSES } from './statuses';
import { isEmailAddress, jsonProblem, MAX_JSON_DEPTH, text, utf8Length } from './text';
import { ignoredField } from './unknown-fields';

// The API's contact contract (docs/api.md "Contacts", docs/decisions.md "Contacts"), shared by every procedure.

export const MAX_TAGS = 100;
export const MAX_CUSTOM_FIELD_KEYS = 100;
export const MAX_CUSTOM_FIELDS_BYTES = 16 * 1024;

// The request array may repeat tags (they collapse); this bounds the work before they do.
const MAX_TAGS_IN_REQUEST = 1000;

// The key a contact is unique on, per account: canonical Unicode form (so a composed and a
// decomposed é are one address), then lower case.
export function normalizeEmail(email: string): string {
  return email.trim().normalize('NFC').toLowerCase();
}

export const emailSchema = z
  .string()
  .trim()
  .min(1, 'Email is required')
  .max(254, 'Email must be at most 254 characters')
  .refine(isEmailAddress, 'Invalid email address')
  // Lower-casing can lengthen a string (İ becomes i̇): the stored key must fit too.
  .refine((email) => normalizeEmail(email).length <= 254, 'Email must be at most 254 characters')
  .describe(
    'Email address; unique per account, case-insensitively. Stored and returned as first given (trimmed). ' +
      'Dot-atom local part (RFC 5321, UTF-8 allowed), domain with a dot; no quoted local parts or IP literals.',
  )
  .meta({ example: 'ada@example.com' });

export const phoneSchema = text()
  .trim()
  .min(3, 'Phone must be at least 3 characters')
  .max(32, 'Phone must be at most 32 characters')
  .describe('Phone number, 3 to 32 characters.')
  .meta({ example: '+447700900123' });

export const nameSchema = text().max(255, 'Must be at most 255 characters');
const firstName = nameSchema.meta({ example: 'Ada' });
const lastName = nameSchema.meta({ example: 'Lovelace' });

export const tagSchema = text()
  .trim()
  .min(1, 'A tag must not be empty')
  .max(64, 'A tag must be at most 64 characters');

export const tagsSchema = z
  .array(tagSchema)
  .max(MAX_TAGS_IN_REQUEST, `At most ${MAX_TAGS_IN_REQUEST} tags in one request`)
  .refine((tags) => new Set(tags).size <= MAX_TAGS, `A contact can have at most ${MAX_TAGS} tags`)
  .describe(
    `Tags; each trimmed, 1 to 64 characters. Duplicates collapse, first occurrence kept; at most ${MAX_TAGS} distinct.`,
  )
  .meta({ example: ['vip', 'newsletter'] });

export const customFieldsSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    // Depth first: the size check serialises the value, which a deep enough one would not survive.
    const problem = jsonProblem(value);
    if (problem) return void ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    if (Object.keys(value).length > MAX_CUSTOM_FIELD_KEYS) {
      ctx.addIssue({ code: 'custom', message: `At most ${MAX_CUSTOM_FIELD_KEYS} custom fields` });
    } else if (utf8Length(JSON.stringify(value)) > MAX_CUSTOM_FIELDS_BYTES) {
      ctx.addIssue({ code: 'custom', message: 'Custom fields must be at most 16 KiB as JSON' });
    }
  })
  .describe(
    `Free key-value pairs; values are any JSON. At most 100 keys, 16 KiB as JSON, and ${MAX_JSON_DEPTH} levels of nesting.`,
  )
  .meta({ example: { plan: 'pro', address: { city: 'Leeds' } } });

export const subscriptionStatusSchema = z.enum(SUBSCRIPTION_STATUSES);

// A contact read from the API may be sent back whole: its read-only fields are accepted and
// ignored. Any other field a body does not know is a 400 (unknown-fields.ts).
const sentBack = {
  id: ignoredField('Read-only: ignored when sent back (the contact is found by email, or by the path\'s id).'),
  createdAt: ignoredField('Read-only: ignored when sent back.'),
  updatedAt: ignoredField('Read-only: ignored when sent back.'),
};

export const contactFieldsSchema = z.strictObject({
  ...sentBack,
  email: emailSchema,
  phone: phoneSchema.nullish(),
  firstName: firstName.nullish().describe('First name, at most 255 characters.'),
  lastName: lastName.nullish().describe('Last name, at most 255 characters.'),
  tags: tagsSchema.optional(),
  customFields: customFieldsSchema.optional(),
  emailSubscriptionStatus: subscriptionStatusSchema.optional().describe('Default `subscribed`.'),
  whatsappSubscriptionStatus: subscriptionStatusSchema.optional().describe('Default `subscribed`.'),
});
// Without the fields a contact sent back brings along: nothing reads them.
type SentBack = keyof typeof sentBack;
export type ContactFields = Omit<z.infer<typeof contactFieldsSchema>, SentBack>;

export const contactUpdateSchema = z.strictObject({
  ...sentBack,
  email: emailSchema.optional(),
  phone: phoneSchema.nullable().optional().describe('null clears it.'),
  firstName: firstName.nullable().optional().describe('null clears it.'),
  lastName: lastName.nullable().optional().describe('null clears it.'),
  tags: tagsSchema.optional().describe('Replaces the existing tags.'),
  customFields: customFieldsSchema.optional().describe('Replaces the existing custom fields (no merge).'),
  emailSubscriptionStatus: subscriptionStatusSchema.optional(),
  whatsappSubscriptionStatus: subscriptionStatusSchema.optional(),
});
export type ContactUpdate = Omit<z.infer<typeof contactUpdateSchema>, SentBack>;

export const contactSchema = z
  .object({
    id: z.string().describe('UUID assigned by the service.').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' }),
    email: z.string().meta({ example: 'ada@example.com' }),
    phone: z.string().nullable().meta({ example: '+447700900123' }),
    firstName: z.string().nullable().meta({ example: 'Ada' }),
    lastName: z.string().nullable().meta({ example: 'Lovelace' }),
    tags: z.array(z.string()).meta({ example: ['vip', 'newsletter'] }),
    customFields: z.record(z.string(), z.unknown()).meta({ example: { plan: 'pro', address: { city: 'Leeds' } } }),
    emailSubscriptionStatus: subscriptionStatusSchema,
    whatsappSubscriptionStatus: subscriptionStatusSchema,
    createdAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-22T09:30:00.000Z' }),
    updatedAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-22T09:30:00.000Z' }),
  })
  .meta({ id: 'Contact' });
export type ContactDto = z.infer<typeof contactSchema>;

export const contactResponseSchema = z.object({ contact: contactSchema });
