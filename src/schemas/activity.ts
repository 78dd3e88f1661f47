import { z } from 'zod';
import { emailSchema } from './contact';
import { cursorSchema, nextCursorSchema } from './list';
import { jsonProblem, nestsDeeperThan, text, utf8Length } from './text';

// Activities: the contact's own events, posted by the account's systems (docs/activities.md).
// Every name and shape here is the product's decision (issue 36): integrators write code
// against it.

export const ACTIVITY_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;
export const MAX_ACTIVITY_NAME = 128;
export const MAX_PROPERTIES_BYTES = 16 * 1024;
// The properties object is level 1; each nested object or array adds one.
export const MAX_PROPERTIES_DEPTH = 5;
export const MAX_ACTIVITY_BATCH = 500;
export const MAX_ACTIVITY_PAGE = 100;

const ID_PROBLEM = 'Must be 1 to 128 characters of A-Z, a-z, 0-9, _ . : -';

export const activityIdSchema = z
  .string()
  .regex(ACTIVITY_ID_PATTERN, ID_PROBLEM)
  .describe('Your id for the activity: 1 to 128 characters of `[A-Za-z0-9_.:-]`, unique per account. Made (a UUID) when absent.')
  .meta({ example: 'order-1042' });

export const activityNameSchema = text()
  .min(1, 'Must not be empty')
  .max(MAX_ACTIVITY_NAME, `Must be at most ${MAX_ACTIVITY_NAME} characters`)
  .describe('What happened, 1 to 128 characters, compared exactly (case-sensitive).')
  .meta({ example: 'order_placed' });

export const propertiesSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    // Depth first: the size check serialises the value.
    if (nestsDeeperThan(value, MAX_PROPERTIES_DEPTH)) {
      return void ctx.addIssue({ code: 'custom', message: `Nested deeper than ${MAX_PROPERTIES_DEPTH} levels (the object itself is level 1)` });
    }
    const problem = jsonProblem(value);
    if (problem) return void ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    if (utf8Length(JSON.stringify(value)) > MAX_PROPERTIES_BYTES) {
      ctx.addIssue({ code: 'custom', message: 'Must be at most 16 KiB as UTF-8 JSON' });
    }
  })
  .describe(
    `Any JSON object (default \`{}\`): at most 16 KiB as UTF-8 JSON and ${MAX_PROPERTIES_DEPTH} levels deep ` +
      '(the object is level 1; each nested object or array adds one).',
  )
  .meta({ example: { orderId: '1042', total: 59.9 } });

const occurredAtSchema = z.iso
  .datetime({ offset: true, error: 'Must be an ISO 8601 date-time with a zone, e.g. 2026-11-21T09:30:00.000Z' })
  .describe(
    'When it happened (default: when it is received). At most 24 hours ahead of the server\'s clock and not older than ' +
      'the retention (ACTIVITY_RETENTION_DAYS, 90 days by default).',
  )
  .meta({ example: '2026-12-02T09:30:00.000Z' });

// { email } or { id }: one of the two. An object with a rule rather than a union, so that a bad
// value is named at its field (contact.email) rather than as "no variant matched".
export const activityContactSchema = z
  .strictObject({
    email: emailSchema.optional().describe('The contact\'s email: a contact that does not exist is created.'),
    id: z.string().optional().describe('The contact\'s id (UUID): one that does not exist is a 404.').meta({ example: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }),
  })
  .refine((value) => (value.email === undefined) !== (value.id === undefined), { message: 'Give email or id, not both' })
  .describe('The contact, by `email` (created when new, as the trigger\'s upsert does) or by `id`.');

export const activityInputSchema = z.strictObject({
  contact: activityContactSchema,
  name: activityNameSchema,
  properties: propertiesSchema.optional(),
  occurredAt: occurredAtSchema.optional(),
  id: activityIdSchema.optional(),
});
export type ActivityInput = z.infer<typeof activityInputSchema>;

const duplicateSchema = z
  .boolean()
  .describe('True when an activity with this id was already stored with the same name and properties: nothing was written, and this is the stored one.');

export const acceptedActivitySchema = z.object({
  id: z.string().meta({ example: 'order-1042' }),
  contactId: z.string().meta({ example: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }),
  name: z.string().meta({ example: 'order_placed' }),
  occurredAt: z.string().meta({ example: '2026-12-02T09:30:00.000Z' }),
  duplicate: duplicateSchema,
});
export type AcceptedActivity = z.infer<typeof acceptedActivitySchema>;

export const activityBatchInputSchema = z.strictObject({
  activities: z
    .array(activityInputSchema)
    .min(1, 'Give at least one activity')
    .max(MAX_ACTIVITY_BATCH, `A batch holds at most ${MAX_ACTIVITY_BATCH} activities`)
    .describe(`1 to ${MAX_ACTIVITY_BATCH} activities, each as POST /activities takes it.`),
});

export const activityBatchOutputSchema = z.object({
  summary: z.object({
    total: z.number().int().describe('Items in the request.').meta({ example: 3 }),
    accepted: z.number().int().describe('Activities stored by this request.').meta({ example: 2 }),
    duplicates: z.number().int().describe('Items that were already stored (the same id, name and properties).').meta({ example: 1 }),
  }),
  activities: z
    .array(
      z.object({
        id: z.string().meta({ example: 'order-1042' }),
        contactId: z.string().meta({ example: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }),
        duplicate: duplicateSchema,
      }),
    )
    .describe('One per item, in request order.'),
});
export type ActivityBatchOutcome = z.infer<typeof activityBatchOutputSchema>;

export const listedActivitySchema = z.object({
  id: z.string().meta({ example: 'order-1042' }),
  name: z.string().meta({ example: 'order_placed' }),
  properties: z.record(z.string(), z.unknown()).meta({ example: { orderId: '1042', total: 59.9 } }),
  occurredAt: z.string().meta({ example: '2026-12-02T09:30:00.000Z' }),
  receivedAt: z.string().meta({ example: '2026-12-02T09:30:01.250Z' }),
});
export type ListedActivity = z.infer<typeof listedActivitySchema>;

const PAGE_LIMIT_PROBLEM = `limit must be an integer from 1 to ${MAX_ACTIVITY_PAGE}`;
export const activityListInputSchema = z.strictObject({
  id: z.string().describe('The contact id (UUID).'),
  limit: z
    .number({ error: PAGE_LIMIT_PROBLEM })
    .int(PAGE_LIMIT_PROBLEM)
    .min(1, PAGE_LIMIT_PROBLEM)
    .max(MAX_ACTIVITY_PAGE, PAGE_LIMIT_PROBLEM)
    .default(50)
    .describe(`Items per page, 1 to ${MAX_ACTIVITY_PAGE} (default 50).`),
  cursor: cursorSchema,
});

export const activityListOutputSchema = z.object({
  activities: z.array(listedActivitySchema),
  nextCursor: nextCursorSchema,
});
