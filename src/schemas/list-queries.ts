import { z } from 'zod';
import { type RunStatus } from './statuses';
import { subscriptionStatusSchema, tagSchema } from './contact';
import { cursorSchema, flagSchema, instantSchema, limitSchema, nextCursorSchema } from './list';
import { listedRunSchema, runStatusSchema, sequenceSchema, sequenceStatusSchema } from './sequence';
import { text } from './text';

// The list procedures' inputs and outputs. Strict: a misspelt filter (`tags=`) is a 400 naming
// it, not a silent list of everything.

export const contactListInputSchema = z.strictObject({
  limit: limitSchema,
  cursor: cursorSchema,
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
    .describe('`createdAt`: newest first (default). `updatedAt`: oldest change first, for incremental sync.'),
});

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
