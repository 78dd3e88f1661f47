import { z } from 'zod';

// The API's contact contract (SPEC.md 2.1, CONTRACT.md "Contacts"), shared by every procedure.

export const MAX_TAGS = 100;
export const MAX_CUSTOM_FIELD_KEYS = 100;
export const MAX_CUSTOM_FIELDS_BYTES = 16 * 1024;

export const emailSchema = z
  .string()
  .trim()
  .min(1, 'Email is required')
  .max(254, 'Email must be at most 254 characters')
  .pipe(z.email('Invalid email address'))
  .describe('Email address; unique per account, case-insensitively. Stored and returned as first given (trimmed).')
  .meta({ example: 'ada@example.com' });

export const phoneSchema = z
  .string()
  .trim()
  .min(3, 'Phone must be at least 3 characters')
  .max(32, 'Phone must be at most 32 characters')
  .describe('Phone number, 3 to 32 characters.')
  .meta({ example: '+447700900123' });

export const nameSchema = z.string().max(255, 'Must be at most 255 characters');

export const tagSchema = z
  .string()
  .trim()
  .min(1, 'A tag must not be empty')
  .max(64, 'A tag must be at most 64 characters');

export const tagsSchema = z
  .array(tagSchema)
  .max(MAX_TAGS, `At most ${MAX_TAGS} tags`)
  .describe('Tags; each trimmed, 1 to 64 characters. Duplicates collapse, first occurrence kept.')
  .meta({ example: ['vip', 'newsletter'] });

export const customFieldsSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => Object.keys(value).length <= MAX_CUSTOM_FIELD_KEYS, {
    message: `At most ${MAX_CUSTOM_FIELD_KEYS} custom fields`,
  })
  .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_CUSTOM_FIELDS_BYTES, {
    message: 'Custom fields must be at most 16 KiB as JSON',
  })
  .describe('Free key-value pairs; values are any JSON. At most 100 keys and 16 KiB.')
  .meta({ example: { plan: 'pro', address: { city: 'Leeds' } } });

export const subscriptionStatusSchema = z.enum(['subscribed', 'unsubscribed']);

export const contactFieldsSchema = z.object({
  email: emailSchema,
  phone: phoneSchema.nullish(),
  firstName: nameSchema.nullish().describe('First name, at most 255 characters.'),
  lastName: nameSchema.nullish().describe('Last name, at most 255 characters.'),
  tags: tagsSchema.optional(),
  customFields: customFieldsSchema.optional(),
  emailSubscriptionStatus: subscriptionStatusSchema.optional().describe('Default `subscribed`.'),
  whatsappSubscriptionStatus: subscriptionStatusSchema.optional().describe('Default `subscribed`.'),
});
export type ContactFields = z.infer<typeof contactFieldsSchema>;

export const contactUpdateSchema = z.object({
  email: emailSchema.optional(),
  phone: phoneSchema.nullable().optional().describe('null clears it.'),
  firstName: nameSchema.nullable().optional().describe('null clears it.'),
  lastName: nameSchema.nullable().optional().describe('null clears it.'),
  tags: tagsSchema.optional().describe('Replaces the existing tags.'),
  customFields: customFieldsSchema.optional().describe('Replaces the existing custom fields (no merge).'),
  emailSubscriptionStatus: subscriptionStatusSchema.optional(),
  whatsappSubscriptionStatus: subscriptionStatusSchema.optional(),
});
export type ContactUpdate = z.infer<typeof contactUpdateSchema>;

export const contactSchema = z
  .object({
    id: z.string().describe('UUID assigned by the service.'),
    email: z.string(),
    phone: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    tags: z.array(z.string()),
    customFields: z.record(z.string(), z.unknown()),
    emailSubscriptionStatus: subscriptionStatusSchema,
    whatsappSubscriptionStatus: subscriptionStatusSchema,
    createdAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
    updatedAt: z.string().describe('ISO 8601 UTC with milliseconds.'),
  })
  .meta({ id: 'Contact' });
export type ContactDto = z.infer<typeof contactSchema>;

export const contactResponseSchema = z.object({ contact: contactSchema });
