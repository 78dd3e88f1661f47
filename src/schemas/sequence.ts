import { z } from 'zod';
import { SEQUENCE_STATUSES } from './statuses';
import { RUN_STATUSES } from './statuses';

// The Sequences API's contract (docs/api.md "Sequences"; docs/decisions.md "Runs", "Batch and bulk").

export const MAX_CONTACT_IDS = 500;

export const contactIdsSchema = z
  .array(z.uuid('Each contact id must be a UUID'))
  .min(1, 'Give at least one contact id')
  .max(MAX_CONTACT_IDS, `At most ${MAX_CONTACT_IDS} contact ids`)
  .describe('Contact ids (UUIDs), 1 to 500. Repeated ids count once.')
  .meta({ example: ['3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f'] });

export const runStatusSchema = z.enum(RUN_STATUSES);

export const runSchema = z
  .object({
    id: z.string().describe('UUID of the run.').meta({ example: 'b2d4f6a8-1c3e-4f5a-8b7c-9d0e1f2a3b4c' }),
    status: runStatusSchema.describe('pending, running and paused are active; completed, failed and cancelled are not.'),
    startedAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-22T09:30:00.000Z' }),
    completedAt: z.string().nullable().describe('Set when the run completes, fails or is cancelled; null before.').meta({ example: null }),
    createdAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-22T09:30:00.000Z' }),
  })
  .meta({ id: 'SequenceRun' });
export type RunDto = z.infer<typeof runSchema>;

export const enrollmentSchema = z
  .object({
    id: z.string().meta({ example: 'c8e6a4f2-0d1b-4c9e-a7f5-3b2d1c0e9f8a' }),
    sequenceId: z.string().meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    status: z.string().describe('`completed`: the call ran to its end.').meta({ example: 'completed' }),
    totalContacts: z.number().int().describe('Distinct contact ids in the request.').meta({ example: 3 }),
    successfulEnrollments: z.number().int().meta({ example: 2 }),
    failedEnrollments: z.number().int().meta({ example: 0 }),
    skippedDuplicates: z.number().int().meta({ example: 1 }),
  })
  .meta({ id: 'Enrollment' });
export type EnrollmentDto = z.infer<typeof enrollmentSchema>;

const contactId = z.string().describe('UUID of the contact (created or updated by this call).').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' });

export const enrolledSchema = z.object({
  enrolled: z.literal(true),
  contactId,
  runId: z.string().describe('UUID of the new run.').meta({ example: 'b2d4f6a8-1c3e-4f5a-8b7c-9d0e1f2a3b4c' }),
});
export const activeRunExistsSchema = z.object({
  enrolled: z.literal(false),
  reason: z.literal('active_run_exists'),
  contactId,
});
export const limitReachedSchema = z.object({
  enrolled: z.literal(false),
  reason: z.literal('sequence_limit_reached'),
  message: z.string().meta({ example: 'The account has reached its limit of active runs (1000)' }),
  contactId,
});
export const enrollOutcomeSchema = z.union([enrolledSchema, activeRunExistsSchema, limitReachedSchema]);
export type EnrollOutcome = z.infer<typeof enrollOutcomeSchema>;

export const sequenceStatusSchema = z.enum(SEQUENCE_STATUSES);

export const sequenceSchema = z
  .object({
    id: z.string().describe('UUID of the sequence.').meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    name: z.string().meta({ example: 'Welcome series' }),
    status: sequenceStatusSchema.describe('Only an `active` sequence accepts trigger and enrollments.'),
    activeRuns: z.number().int().describe('Runs of the sequence in pending, running or paused now.').meta({ example: 42 }),
    createdAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-20T08:00:00.000Z' }),
    updatedAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-21T10:15:00.000Z' }),
  })
  .meta({ id: 'Sequence' });
export type SequenceDto = z.infer<typeof sequenceSchema>;

// A run in the run lists: the run, and what it belongs to.
export const listedRunSchema = runSchema
  .extend({
    sequenceId: z.string().describe('UUID of the run\'s sequence.').meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    contactId: z.string().describe('UUID of the run\'s contact.').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' }),
  })
  .meta({ id: 'ListedRun' });
export type ListedRunDto = z.infer<typeof listedRunSchema>;
