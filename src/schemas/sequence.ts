import { z } from 'zod';
import { SEQUENCE_STATUSES } from './statuses';
import { RUN_STATUSES } from './statuses';
import { entrySchema, exitWhenSchema, goalSchema, sendingWindowSchema, stepInputSchema, stepIdSchema, stepsInputSchema } from './sequence-definition';
import { messageSummarySchema } from './message';

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
    version: z.number().int().nullable().describe('The version of the sequence\'s steps the run follows; null for a sequence without steps.').meta({ example: 1 }),
    currentStepId: z
      .string()
      .nullable()
      .describe('The step the run is at (waiting in, or about to start); for a failed or cancelled run, the step it stopped at. Null once completed, and for a sequence without steps.')
      .meta({ example: 'welcome-wait' }),
    reason: z
      .string()
      .nullable()
      .describe('Why the service ended the run: the failed step\'s reason, the exit rule that matched, `unenrolled`. Null otherwise.')
      .meta({ example: null }),
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

// Why an id given to enroll started no run: not a contact of the account, over the account's
// active-run limit, or the contact already meets one of the sequence's exit rules.
export const ENROLL_FAILURE_REASONS = ['not_found', 'sequence_limit_reached', 'exit_rule_met'] as const;
export type EnrollFailureReason = (typeof ENROLL_FAILURE_REASONS)[number];

export const enrollSummarySchema = z.object({
  processed: z.number().int().describe('Distinct contact ids attempted.').meta({ example: 3 }),
  successful: z.number().int().describe('New runs created.').meta({ example: 2 }),
  failed: z.number().int().describe('Unknown contacts, contacts over the account limit, and contacts that already meet an exit rule.').meta({ example: 0 }),
  skipped: z.number().int().describe('Contacts that already had an active run.').meta({ example: 1 }),
  failures: z
    .array(
      z.object({
        contactId: z.string().describe('The id as the request gave it (its first occurrence).'),
        reason: z
          .enum(ENROLL_FAILURE_REASONS)
          .describe(
            '`not_found`: not a contact of the account; `sequence_limit_reached`: over the account\'s active-run limit; ' +
              '`exit_rule_met`: the contact already meets one of the sequence\'s exit rules (it has the tag, or is unsubscribed).',
          ),
      }),
    )
    .describe('One entry per failed id, in request order: `failed` of them.')
    .meta({ example: [{ contactId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', reason: 'not_found' }] }),
});
export type EnrollSummary = z.infer<typeof enrollSummarySchema>;

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
// The contact already meets one of the sequence's exit rules: a run would be cancelled before
// its first step, so none is started (docs/decisions.md "Runs").
export const exitRuleMetSchema = z.object({
  enrolled: z.literal(false),
  reason: z.literal('exit_rule_met'),
  contactId,
});
export const enrollOutcomeSchema = z.union([enrolledSchema, activeRunExistsSchema, limitReachedSchema, exitRuleMetSchema]);
export type EnrollOutcome = z.infer<typeof enrollOutcomeSchema>;

export const sequenceStatusSchema = z.enum(SEQUENCE_STATUSES);

export const sequenceSchema = z
  .object({
    id: z.string().describe('UUID of the sequence.').meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    name: z.string().meta({ example: 'Welcome series' }),
    status: sequenceStatusSchema.describe('Only an `active` sequence accepts trigger and enrollments.'),
    activeRuns: z.number().int().describe('Runs of the sequence in pending, running or paused now.').meta({ example: 42 }),
    version: z.number().int().nullable().describe('The current version of the steps; a new one is made whenever the steps change. Null while the sequence has never had steps.').meta({ example: 2 }),
    steps: z.array(stepInputSchema).describe('The current version\'s steps, each with its `id`. Empty: runs are moved from outside.'),
    exitWhen: exitWhenSchema,
    sendingWindow: sendingWindowSchema.nullable(),
    entry: entrySchema.nullable().describe('The activity that enrolls its contact (docs/activities.md); null: only the API enrolls.'),
    goal: goalSchema.nullable().describe('The activity that converts a run (`goal_met`); null: none.'),
    createdAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-20T08:00:00.000Z' }),
    updatedAt: z.string().describe('ISO 8601 UTC with milliseconds.').meta({ example: '2026-11-21T10:15:00.000Z' }),
  })
  .meta({ id: 'Sequence' });
export type SequenceDto = z.infer<typeof sequenceSchema>;

// What a run in pending or running waits for (src/services/sequences/run-waiting.ts).
export const WAITING_FOR = ['wait', 'activity', 'window', 'retry', 'sequence_paused', 'channel_paused', 'frequency_cap'] as const;
export type WaitingFor = (typeof WAITING_FOR)[number] | null;

// Where a run stands in time: in the run lists and a run's detail.
const runWaitingShape = {
  dueAt: z
    .string()
    .nullable()
    .describe(
      'When the run acts next: the end of its wait (or a wait_for\'s timeout), the sending window\'s next opening, its webhook\'s next attempt, ' +
        'the moment its contact\'s frequency cap allows its message, ' +
        'or (with `waitingFor` null) a time already past: it is due now. Null when nothing is scheduled: ended, paused, ' +
        'being carried out at this moment, at no step, or waiting for its sequence.',
    )
    .meta({ example: '2026-11-23T09:30:00.000Z' }),
  waitingFor: z
    .enum(WAITING_FOR)
    .nullable()
    .describe(
      '`wait`: a wait step until `dueAt`; `activity`: a wait_for step, for its activity, or its timeout at `dueAt`; `window`: the sending window, which opens at `dueAt`; `retry`: a webhook ' +
        'step\'s next attempt at `dueAt`; `sequence_paused`: the sequence is not active (no time); `channel_paused`: ' +
        'its email or WhatsApp step waits for the account\'s channel (or the step\'s template) to resume (no time); `frequency_cap`: its ' +
        'marketing message waits for the contact\'s frequency cap on the channel to allow it, at `dueAt`. Null: nothing ' +
        '(due now, being carried out, paused, ended, or at no step).',
    )
    .meta({ example: 'wait' }),
};

// A run in the run lists: the run, and what it belongs to.
export const listedRunSchema = runSchema
  .extend({
    sequenceId: z.string().describe('UUID of the run\'s sequence.').meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    contactId: z.string().describe('UUID of the run\'s contact.').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' }),
    ...runWaitingShape,
  })
  .meta({ id: 'ListedRun' });
export type ListedRunDto = z.infer<typeof listedRunSchema>;

// What POST /sequences and PATCH /sequences/{id} accept, besides the name and status.
export const definitionInputSchema = z.strictObject({
  steps: stepsInputSchema.optional(),
  exitWhen: exitWhenSchema.optional(),
  sendingWindow: sendingWindowSchema.nullable().optional().describe('null removes the window.'),
  entry: entrySchema.nullable().optional().describe('null removes the entry: only the API enrolls.'),
  goal: goalSchema.nullable().optional().describe('null removes the goal.'),
});

export const moveRunsSchema = z
  .strictObject({
    stepMap: z
      .record(stepIdSchema, stepIdSchema)
      .describe(
        'Old step id -> new step id. A run at a step the map does not name goes to the new step with the same id; ' +
          'a run at a step that is in neither is a 400.',
      )
      .meta({ example: { 'old-wait': 'new-wait' } }),
  })
  .describe('Moves the active runs of older versions to the current one. A moved run starts its new step afresh.');

export const movedRunsSchema = z
  .array(
    z.object({
      fromVersion: z.number().int().describe('The version the runs were on.').meta({ example: 1 }),
      runs: z.number().int().describe('How many of its active runs moved to the current version.').meta({ example: 12 }),
    }),
  )
  .describe('With `moveRuns`: the runs moved, per older version, oldest first; `[]` when none was active there.')
  .meta({ example: [{ fromVersion: 1, runs: 12 }] });

export const EXECUTION_STATUSES = ['running', 'succeeded', 'failed', 'skipped'] as const;

export const executionSchema = z
  .object({
    stepId: z.string().meta({ example: 'welcome-wait' }),
    type: z.string().meta({ example: 'wait' }),
    attempt: z.number().int().describe('1 for the first attempt of a step; a retried webhook counts up.').meta({ example: 1 }),
    status: z.enum(EXECUTION_STATUSES),
    reason: z.string().nullable().describe('Why it failed or was skipped.').meta({ example: null }),
    detail: z.record(z.string(), z.unknown()).nullable().describe('What it did: a branch\'s way (`took`, `to`), a receiver\'s `responseStatus`.'),
    startedAt: z.string().meta({ example: '2026-11-22T09:30:00.000Z' }),
    finishedAt: z.string().nullable().meta({ example: '2026-11-22T09:30:00.120Z' }),
  })
  .meta({ id: 'StepExecution' });
export type ExecutionDto = z.infer<typeof executionSchema>;

// An execution in a run's timeline: with, for a wait, when it ends.
export const timelineExecutionSchema = executionSchema
  .extend({
    endsAt: z
      .string()
      .nullable()
      .describe(
        'For a wait that is waiting (`running`): when it ends, kept while the run is paused. Null otherwise: a finished ' +
          'execution\'s end is `finishedAt`.',
      )
      .meta({ example: null }),
    message: messageSummarySchema
      .nullable()
      .describe('For an email or WhatsApp step: the message it sent (every attempt of a visit shows the same one). Null for other steps, or before the message is queued.'),
  })
  .meta({ id: 'TimelineStepExecution' });
export type TimelineExecutionDto = z.infer<typeof timelineExecutionSchema>;

const activitySnapshotSchema = z
  .object({
    id: z.string().meta({ example: 'cart-77' }),
    name: z.string().meta({ example: 'cart_abandoned' }),
    properties: z.record(z.string(), z.unknown()).meta({ example: { cartId: 'c1', total: 59.9 } }),
    occurredAt: z.string().meta({ example: '2026-12-02T09:30:00.000Z' }),
  })
  .meta({ id: 'RunActivity' });

export const runDetailSchema = runSchema
  .extend({
    sequenceId: z.string().describe('UUID of the run\'s sequence.').meta({ example: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b' }),
    contactId: z.string().describe('UUID of the run\'s contact.').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' }),
    ...runWaitingShape,
    retry: z
      .object({
        attempts: z.number().int().describe('Failed attempts of the step so far.').meta({ example: 5 }),
        lastError: z.string().nullable().describe('Why the last attempt failed.').meta({ example: 'the receiver answered 500' }),
        nextAttemptAt: z
          .string()
          .nullable()
          .describe('When the next attempt is due; null while the run is paused (resume queues it again), while its sequence is not active, or while an attempt is on the wire.')
          .meta({ example: '2026-11-22T10:40:00.000Z' }),
      })
      .nullable()
      .describe('For a run whose current step\'s send failed and will be tried again: how often, why, and when next. Null otherwise.'),
    trigger: activitySnapshotSchema
      .nullable()
      .describe('The activity that enrolled the run (entry by event, docs/activities.md); null for a run the API enrolled.'),
    awaiting: z
      .object({
        activity: z.string().describe('The name it waits for.').meta({ example: 'checkout_completed' }),
        match: z.record(z.string(), z.unknown()).nullable().describe('The match values as rendered for this run; null: one rendered empty, so only the timeout ends the wait.').meta({ example: { cartId: 'c1' } }),
      })
      .nullable()
      .describe('With `waitingFor: "activity"`: the activity its wait_for step waits for (its timeout is `dueAt`). Null otherwise.'),
    executions: z.array(timelineExecutionSchema).describe('Every step execution, oldest first.'),
  })
  .meta({ id: 'SequenceRunDetail' });
export type RunDetailDto = z.infer<typeof runDetailSchema>;
