import { z } from 'zod';
import { tagsSchema } from './contact';
import { text } from './text';

// The contact import's contract (docs/api.md "Importing contacts"): a CSV file, how its columns
// map to a contact's fields, and the import's progress as the worker moves it.

export const IMPORT_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
// An import in these still moves; the others are final.
export const ACTIVE_IMPORT_STATUSES: readonly ImportStatus[] = ['queued', 'running'];

export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 1_000_000;

// The fields a column may fill; `customFields.<name>` fills one custom field.
export const IMPORT_FIELDS = [
  'email',
  'phone',
  'firstName',
  'lastName',
  'tags',
  'emailSubscriptionStatus',
  'whatsappSubscriptionStatus',
] as const;
export const CUSTOM_FIELD_PREFIX = 'customFields.';

export const importOptionsSchema = z.strictObject({
  mapping: z
    .record(z.string(), z.string().nullable())
    .optional()
    .describe(
      'Column header -> field: one of `email`, `phone`, `firstName`, `lastName`, `tags`, `emailSubscriptionStatus`, ' +
        '`whatsappSubscriptionStatus`, or `customFields.<name>`; null leaves the column out. A column not named here ' +
        'maps to the field of its header (letter case, spaces, `-` and `_` aside: `First Name` is firstName), else ' +
        'to `customFields.<header>`.',
    )
    .meta({ example: { 'E-mail address': 'email', Plan: 'customFields.plan', Notes: null } }),
  tags: tagsSchema.optional().describe('Tags to add to every imported contact, after the merge (kept tags stay).'),
  sequenceId: z.string().optional().describe('An active sequence to enroll every imported contact into.').meta({ example: '0193f1c2-6a4b-7a7e-9d1e-2b8f0c4d5e6f' }),
  optedIn: z
    .boolean()
    .optional()
    .describe(
      'These people opted in: only then may a subscription column that says `subscribed` resubscribe a contact ' +
        'who unsubscribed. Without it an import never resubscribes anyone.',
    ),
  fileName: text().trim().max(255, 'Must be at most 255 characters').optional().describe('The file\'s name, to show in lists.').meta({ example: 'customers.csv' }),
});
export type ImportOptions = z.infer<typeof importOptionsSchema>;

export const importColumnSchema = z.object({
  header: z.string().meta({ example: 'E-mail address' }),
  field: z.string().nullable().describe('The field the column fills; null: left out.').meta({ example: 'email' }),
});

export const contactImportSchema = z
  .object({
    id: z.string().meta({ example: '0193f1c2-6a4b-7a7e-9d1e-2b8f0c4d5e6f' }),
    status: z.enum(IMPORT_STATUSES),
    fileName: z.string().nullable().meta({ example: 'customers.csv' }),
    rows: z.number().int().describe('Data rows in the file (the header and blank lines aside).').meta({ example: 1200 }),
    processed: z.number().int().describe('Rows handled so far: inserted + updated + failed.').meta({ example: 500 }),
    inserted: z.number().int().describe('Rows that created a contact.').meta({ example: 420 }),
    updated: z.number().int().describe('Rows applied to an existing contact.').meta({ example: 75 }),
    failed: z.number().int().describe('Rows rejected: listed with their reasons at `/errors`.').meta({ example: 5 }),
    enrolled: z.number().int().describe('Contacts enrolled into `sequenceId` (those already in it, or meeting an exit rule, are not).').meta({ example: 0 }),
    columns: z.array(importColumnSchema),
    tags: z.array(z.string()).describe('Tags added to every imported contact.').meta({ example: ['imported'] }),
    sequenceId: z.string().nullable().meta({ example: null }),
    optedIn: z.boolean(),
    error: z.string().nullable().describe('Why a failed import stopped.').meta({ example: null }),
    createdAt: z.string().meta({ example: '2026-12-02T09:30:00.000Z' }),
    startedAt: z.string().nullable().meta({ example: '2026-12-02T09:30:00.120Z' }),
    finishedAt: z.string().nullable().meta({ example: null }),
  })
  .meta({ id: 'ContactImport' });
export type ContactImportDto = z.infer<typeof contactImportSchema>;

export const importIdParam = z.strictObject({ id: z.string().describe('The import id.') });

export const importErrorSchema = z.object({
  row: z.number().int().describe('The data row, 1 for the first after the header (blank lines not counted).').meta({ example: 3 }),
  reason: z.string().meta({ example: '"E-mail" (email): Invalid email address' }),
  values: z.array(z.string()).describe('The row\'s cells as the file had them.').meta({ example: ['ada@', 'Ada'] }),
});
export type ImportErrorDto = z.infer<typeof importErrorSchema>;
