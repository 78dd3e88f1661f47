import { z } from 'zod';
import { type RunStatus } from './statuses';
import { contactSchema, subscriptionStatusSchema, tagSchema } from './contact';
import { cursorSchema, flagSchema, instantSchema, limitSchema, nextCursorSchema, syncFieldsSchema } from './list';
import { listedRunSchema, runStatusSchema, sequenceSchema, sequenceStatusSchema } from './sequence';
import { text } from './text';

// The list procedures' inputs and outputs. Strict: a misspelt filter (`tags=`) is a 400 naming
// it, not a silent list of everything.

export const contactListInputSchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorSchema
    .unwrap()
    .describe(
      'The `nextCursor` of the previous page, as given; with `sort=updatedAt` also the `resumeCursor` of a walk\'s last page. ' +
        'Valid only for the same list with the same filters and sort; any other cursor is a 400.',
    )
    .optional(),
  tag: tagSchema.optional().describe('Only contacts with this tag (exact, case-sensitive, as tags are).'),
  emailSubscriptionStatus: subscriptionStatusSchema.optional(),
  whatsappSubscriptionStatus: subscriptionStatusSchema.optional(),
  q: text()
    .trim()
    .min(1, 'q must not be empty')
    .max(254, 'q must be at most 254 characters')
    .optional()
    .describe('Only contacts whose email starts with this, case-insensitively (`ada` finds `Ada@example.com`).'),
  createdAfter: instantSchema('createdAfter').describe('Only contacts created after this instant (exclusive).'),
  updatedSince: instantSchema('updatedSince').describe('Only contacts last changed after this instant (exclusive).'),
  sort: z
    .enum(['createdAt', 'updatedAt'])
    .default('createdAt')
    .describe(
      '`createdAt`: newest first (default). `updatedAt`: oldest change first, for incremental sync: only changes a few ' +
        'seconds old are listed, and the last page carries `resumeCursor`.',
    ),
});

// The sync fields only with sort=updatedAt: the default order answers as it always has.
// The body's example is the default order's page: composed from every field's example, it would
// have nextCursor and resumeCursor both set, which no answer has.
const contactExample = Object.fromEntries(
  Object.entries(contactSchema.shape).map(([name, field]) => [name, field instanceof z.ZodEnum ? field.options[0] : field.meta()?.example]),
);
export const contactListOutputSchema = z
  .object({ contacts: z.array(contactSchema), nextCursor: nextCursorSchema })
  .extend(syncFieldsSchema.shape)
  .meta({ example: { contacts: [contactExample], nextCursor: nextCursorSchema.meta()?.example } });

export const sequenceListInputSchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorSchema,
  status: sequenceStatusSchema.optional().describe('Only sequences in this status.'),
});

export const sequenceListOutputSchema = z.object({ sequences: z.array(sequenceSchema), nextCursor: nextCursorSchema });

export const runListInputSchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorSchema,
  status: runStatusSchema.optional().describe('Only runs in this status.'),
  active: flagSchema
    .optional()
    .describe('`true`: only runs in pending, running or paused; `false`: only completed, failed or cancelled.'),
});

export const runListOutputSchema = z.object({ runs: z.array(listedRunSchema), nextCursor: nextCursorSchema });

// The run filters as the services take them.
export function runFilters(input: z.infer<typeof runListInputSchema>): {
  limit: number;
  cursor?: string;
  status?: RunStatus;
  active?: boolean;
} {
  return {
    limit: input.limit,
    cursor: input.cursor,
    status: input.status,
    active: input.active === undefined ? undefined : input.active === 'true',
  };
}
