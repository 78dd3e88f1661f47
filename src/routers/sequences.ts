import { z } from 'zod';
import { contactFieldsSchema } from '../schemas/contact';
import { contactIdsSchema, enrollmentSchema, enrollOutcomeSchema, enrollSummarySchema, runSchema } from '../schemas/sequence';
import { SECRETS_KEY_MISSING } from '../errors/app-errors';
import { DEFAULT_CHANNEL_SETTINGS } from '../services/channels/channel-settings';
import { enrollByIds } from '../services/sequences/enroll-by-ids';
import { enrollContact } from '../services/sequences/enroll-contact';
import { enrollmentStatus } from '../services/sequences/enrollment-status';
import { unenroll } from '../services/sequences/unenroll';
import { deleteSequence, SEQUENCE_HAS_RUNS } from '../services/sequences/delete-sequence';
import { getSequence, listSequences } from '../services/sequences/list-sequences';
import { listSequenceRuns } from '../services/sequences/list-runs';
import {
  runFilters,
  runListInputSchema,
  runListOutputSchema,
  sequenceListInputSchema,
  sequenceListOutputSchema,
} from '../schemas/list-queries';
import { definitionInputSchema, movedRunsSchema, moveRunsSchema, runDetailSchema, sequenceSchema } from '../schemas/sequence';
import { SEQUENCE_STATUSES } from '../schemas/statuses';
import { text } from '../schemas/text';
import { getRunDetail } from '../services/sequences/run-detail';
import { pauseRun, resumeRun } from '../services/sequences/run-transitions';
import { changeSequence, createSequence } from '../services/sequences/sequence-admin';
import { accountProcedure, router } from '../trpc/init';
import { messagePreviewSchema } from '../schemas/message-preview';
import { stepIdSchema } from '../schemas/sequence-definition';
import { previewMessage } from '../services/messages/preview-message';
import { sequenceStatsSchema, statsDaysSchema } from '../schemas/sequence-stats';
import { sequenceStats } from '../services/analytics/sequence-stats';
import { SENDER_REQUIRED_EXAMPLE } from '../errors/app-errors';

const TAGS = ['Sequences'];
const sequenceParam = z.strictObject({ id: z.string().describe('The sequence id (UUID).') });
const runParams = sequenceParam.extend({ runId: z.string().describe('The run id (UUID).') });
const name = text().trim().min(1, 'Name must not be empty').max(255, 'Name must be at most 255 characters').meta({ example: 'Welcome series' });
const status = z.enum(SEQUENCE_STATUSES);
const DEFINITION_ERRORS =
  'A bad definition is a 400 naming the step (by the id you gave, else by its place and type) and the problem: unknown ' +
  'or duplicate step id, a cycle without a wait (at the branch that closes it), a duration out of range, a weekday ' +
  'listed twice, a bad time zone, a condition or exit rule of no allowed shape, an endpointId that is not a webhook ' +
  'endpoint of the account; nothing is stored. Saved or made `active` with an email step without `from`, in an ' +
  'account with no email sender on a server without EMAIL_FROM (every run would fail there): 409 `sender_required`, ' +
  '`details` naming each such step\'s `from`; nothing is stored.';
export const sequencesRouter = router({
  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences',
        tags: TAGS,
        summary: 'List sequences',
        description:
          'The account\'s sequences, newest first by `createdAt` (ties by `id`), with their number of active runs. ' +
          'Archived sequences are left out unless asked for with `status=archived`. Filter by `status`; walk the pages ' +
          'with `nextCursor`.',
        protect: true,
      },
    })
    .input(sequenceListInputSchema)
    .output(sequenceListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listSequences(ctx.db, { ...input, accountId: ctx.accountId });
      return { sequences: page.items, nextCursor: page.nextCursor };
    }),

  get: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences/{id}',
        tags: TAGS,
        summary: 'Get a sequence',
        description: 'The sequence: its status, its number of active runs (pending, running or paused), its current version and steps, its exit rules and sending window.',
        protect: true,
        errorResponses: { 404: 'Sequence not found' },
      },
    })
    .input(sequenceParam)
    .output(z.object({ sequence: sequenceSchema }))
    .query(async ({ ctx, input }) => ({ sequence: await getSequence(ctx.db, { ...input, accountId: ctx.accountId }) })),

  create: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences',
        tags: TAGS,
        summary: 'Create a sequence',
        description:
          'A sequence with its steps (version 1 when there are any), exit rules and sending window. `status` defaults ' +
          `to \`draft\`; only an \`active\` sequence accepts enrollments and moves its runs. ${DEFINITION_ERRORS}`,
        protect: true,
        errorResponses: { 409: SENDER_REQUIRED_EXAMPLE },
      },
      successStatus: 201,
    })
    .input(z.strictObject({ name, status: status.optional().describe('Default `draft`.') }).extend(definitionInputSchema.shape))
    .output(z.object({ sequence: sequenceSchema }))
    .mutation(async ({ ctx, input }) => ({ sequence: await createSequence(ctx.db, { ...input, accountId: ctx.accountId, channels: ctx.channels }) })),

  update: accountProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/sequences/{id}',
        tags: TAGS,
        summary: 'Change a sequence',
        description:
          'Any of name, status, steps, exitWhen, sendingWindow. New steps make a new version (the same steps, in any ' +
          'key order, with or without their ids, do not); runs keep the version they started on unless `moveRuns` ' +
          'moves the active runs of older versions, each by `stepMap` or to the step with the same id (a run at a ' +
          'step neither places is a 400, and nothing changes; a run of a version without steps goes to the first ' +
          'step), and the answer\'s `moved` says how many runs moved from each version. Emptying the steps while ' +
          'runs are at steps is a 400. Exit rules and the sending window apply to every run at once. Setting status ' +
          `\`active\` again lets set-aside runs carry on. ${DEFINITION_ERRORS}`,
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: SENDER_REQUIRED_EXAMPLE },
      },
    })
    .input(
      sequenceParam
        .extend({ name: name.optional(), status: status.optional(), moveRuns: moveRunsSchema.optional() })
        .extend(definitionInputSchema.shape),
    )
    .output(z.object({ sequence: sequenceSchema, moved: movedRunsSchema.optional() }))
    .mutation(async ({ ctx, input }) => {
      const { sequence, moved } = await changeSequence(ctx.db, { ...input, accountId: ctx.accountId, channels: ctx.channels });
      return moved === null ? { sequence } : { sequence, moved };
    }),

  delete: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/sequences/{id}',
        tags: TAGS,
        summary: 'Delete a sequence that never had a run',
        description:
          'For drafts made while trying things: a sequence with no run (in any status) is deleted for good, with its ' +
          'versions. One that has runs stays, with a 409 `sequence_has_runs`: archive it instead (`PATCH` with ' +
          '`{"status": "archived"}`), which leaves it out of the list. An id that is not a UUID is a 400.',
        protect: true,
        errorResponses: { 400: 'id is not a UUID', 404: 'Sequence not found', 409: SEQUENCE_HAS_RUNS },
        successDescription: 'Deleted; no body',
      },
      successStatus: 204,
    })
    // Checked, unlike the other routes' ids (where a malformed id is simply not found): a
    // DELETE that names nothing deletable says so. guid: any UUID-shaped id, as ids are stored.
    .input(z.strictObject({ id: z.guid('must be a UUID').describe('The sequence id (UUID).') }))
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteSequence(ctx.db, { id: input.id, accountId: ctx.accountId });
    }),

  stats: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences/{id}/stats',
        tags: TAGS,
        summary: 'A sequence\'s per-step and daily figures',
        description:
          'Over the last `days` UTC days, today included (default 30): per step, the runs that reached it, completed it, ' +
          'skipped it (by reason) and failed at it, and the runs waiting at it now; per day, enrollments, completions, ' +
          'exits by reason, and messages sent, delivered, read and failed. Read from counters projected from the run log, which ' +
          'every change to runs appends to (docs/analytics.md): the answer\'s cost does not grow with the number of runs, and ' +
          '`asOf` says how fresh it is (every change committed before it is counted).',
        protect: true,
        errorResponses: { 400: 'days is not a whole number from 1 to 90', 404: 'Sequence not found' },
      },
    })
    .input(sequenceParam.extend({ days: statsDaysSchema }))
    .output(z.object({ stats: sequenceStatsSchema }))
    .query(async ({ ctx, input }) => ({ stats: await sequenceStats(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, days: input.days }) })),

  run: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences/{id}/runs/{runId}',
        tags: TAGS,
        summary: 'A run and its timeline',
        description:
          'The run with its version, its current step, what it waits for and until when (`waitingFor`, `dueAt`), and ' +
          'every step execution, oldest first: step, attempt, status (running, succeeded, failed, skipped), reason, ' +
          'start and end (`endsAt`: when a wait under way ends).',
        protect: true,
        errorResponses: { 404: 'Sequence not found, or Run not found' },
      },
    })
    .input(runParams)
    .output(z.object({ run: runDetailSchema }))
    .query(async ({ ctx, input }) => ({
      run: await getRunDetail(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, runId: input.runId }),
    })),

  preview: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/preview',
        tags: TAGS,
        summary: 'Preview a message step for a contact',
        description:
          'Renders an email or whatsapp step of the sequence\'s current version for the contact, as it would be sent now ' +
          '(the contact\'s latest run in the sequence, if any, is `run`), and sends and records nothing. Email: `from`, ' +
          '`to`, `subject`, `html`, `text` and the `headers` the message carries (`List-Unsubscribe`, ' +
          '`List-Unsubscribe-Post`, `Reply-To`). WhatsApp: `request`, the JSON body that would be POSTed to the Cloud API. ' +
          '`skipReason` says why the step would be skipped for this contact (unsubscribed, no usable phone). A step that ' +
          'is not in the current version, or not a message step, is a 400. A server without a secrets key cannot sign the ' +
          'unsubscribe link every message carries: 409 secrets_key_missing.',
        protect: true,
        errorResponses: {
          400: 'stepId names no email or whatsapp step of the current version, or contactId is not a UUID',
          404: 'Sequence not found, or Contact not found',
          // The same error as storing a secret: without the key, no link can be signed either.
          409: SECRETS_KEY_MISSING,
        },
      },
    })
    .input(
      sequenceParam.extend({
        stepId: stepIdSchema.describe('An email or whatsapp step of the sequence\'s current version.'),
        contactId: z.guid('must be a UUID').describe('A contact of the account (UUID).').meta({ example: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' }),
      }),
    )
    .output(z.object({ preview: messagePreviewSchema }))
    .mutation(async ({ ctx, input }) => ({
      preview: await previewMessage(
        ctx.db,
        { accountId: ctx.accountId, sequenceId: input.id, stepId: input.stepId, contactId: input.contactId },
        ctx.channels ?? DEFAULT_CHANNEL_SETTINGS,
      ),
    })),

  pauseRun: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/runs/{runId}/pause',
        tags: TAGS,
        summary: 'Pause a run',
        description: 'A pending or running run stops acting; resume carries on where it stopped. 409 for a run in any other status.',
        protect: true,
        errorResponses: { 404: 'Sequence not found, or Run not found', 409: 'A completed run cannot be paused' },
      },
    })
    .input(runParams)
    .output(z.object({ run: runSchema }))
    .mutation(async ({ ctx, input }) => ({ run: await pauseRun(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, runId: input.runId }) })),

  resumeRun: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/runs/{runId}/resume',
        tags: TAGS,
        summary: 'Resume a paused run',
        description:
          'The run goes back to the status it was paused from and carries on: a wait still under way keeps its end, ' +
          'anything already due happens now. 409 unless the run is paused.',
        protect: true,
        errorResponses: { 404: 'Sequence not found, or Run not found', 409: 'A pending run cannot be resumed: only a paused one' },
      },
    })
    .input(runParams)
    .output(z.object({ run: runSchema }))
    .mutation(async ({ ctx, input }) => ({ run: await resumeRun(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, runId: input.runId }) })),

  runs: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences/{id}/runs',
        tags: TAGS,
        summary: 'List a sequence\'s runs',
        description:
          'Newest first by `createdAt` (ties by `id`). Filter by `status`, or `active=true` for pending, running ' +
          'and paused (`active=false` for the others). Works whatever the sequence\'s status.',
        protect: true,
        errorResponses: { 404: 'Sequence not found' },
      },
    })
    .input(runListInputSchema.extend(sequenceParam.shape))
    .output(runListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listSequenceRuns(ctx.db, { ...runFilters(input), accountId: ctx.accountId, sequenceId: input.id });
      return { runs: page.items, nextCursor: page.nextCursor };
    }),

  trigger: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/trigger',
        tags: TAGS,
        summary: 'Upsert a contact and enroll it',
        description:
          'Atomically upserts the contact by email (upsert merge rules) and starts a run. The sequence must be ' +
          '`active`. Every outcome is 202: enrolled, `active_run_exists`, `exit_rule_met` (the contact, once ' +
          'upserted, already meets one of the sequence\'s exit rules: no run is started) or `sequence_limit_reached`; ' +
          'the contact upsert stands in all four.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
      },
      successStatus: 202,
    })
    .input(sequenceParam.extend({ contact: contactFieldsSchema.describe('The contact to upsert, by email.') }))
    .output(enrollOutcomeSchema)
    .mutation(({ ctx, input }) =>
      enrollContact(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contact: input.contact, idempotency: ctx.idempotency }),
    ),

  enroll: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/enroll',
        tags: TAGS,
        summary: 'Enroll existing contacts by id',
        description:
          'Up to 500 ids. Contacts with an active run in the sequence are skipped; ids that are not contacts of ' +
          'the account, contacts that already meet one of the sequence\'s exit rules, and contacts over the ' +
          'account\'s active-run limit count as failed; `summary.failures` names each, with its reason, in request order.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
      },
      successStatus: 201,
    })
    .input(sequenceParam.extend({ contactIds: contactIdsSchema }))
    .output(
      z.object({
        enrollment: enrollmentSchema,
        summary: enrollSummarySchema,
      }),
    )
    .mutation(({ ctx, input }) =>
      enrollByIds(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactIds: input.contactIds, idempotency: ctx.idempotency }),
    ),

  enrollByEmail: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/enroll-by-email',
        tags: TAGS,
        summary: 'Upsert a contact by email and enroll it',
        description:
          'Like trigger, with the contact fields at the top level. 201 when enrolled; 200 when the contact ' +
          'already has an active run, already meets one of the sequence\'s exit rules, or the account\'s ' +
          'active-run limit is reached.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
        successDescription: 'Not enrolled: `active_run_exists`, `exit_rule_met` or `sequence_limit_reached`',
      },
      successStatus: 200,
      alternateSuccess: { status: 201, description: 'Enrolled: a new run was started' },
    })
    .input(contactFieldsSchema.extend(sequenceParam.shape))
    .output(enrollOutcomeSchema)
    .mutation(async ({ ctx, input }) => {
      const { id, ...contact } = input;
      const outcome = await enrollContact(ctx.db, { accountId: ctx.accountId, sequenceId: id, contact, idempotency: ctx.idempotency });
      ctx.http.status = outcome.enrolled ? 201 : 200;
      return outcome;
    }),

  unenroll: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/sequences/{id}/unenroll',
        tags: TAGS,
        summary: 'Cancel contacts\' active runs',
        description:
          'Cancels the runs in pending, running or paused. Lists only the contacts whose run was cancelled, in ' +
          'request order; others are skipped silently. Works whatever the sequence\'s status.',
        protect: true,
        errorResponses: { 404: 'Sequence not found' },
      },
    })
    .input(sequenceParam.extend({ contactIds: contactIdsSchema }))
    .output(
      z.object({
        cancelled: z.number().int().describe('Contacts whose run was cancelled.').meta({ example: 1 }),
        contactIds: z.array(z.string()).describe('Those contacts, in request order.').meta({ example: ['3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f'] }),
      }),
    )
    .mutation(({ ctx, input }) =>
      unenroll(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactIds: input.contactIds, idempotency: ctx.idempotency }),
    ),

  enrollmentStatus: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/sequences/{id}/enrollments/{contactId}',
        tags: TAGS,
        summary: 'A contact\'s enrollment in a sequence',
        description: '`enrolled` is true while the latest run is active. `run` is the latest run, or null if none.',
        protect: true,
        errorResponses: { 404: 'Sequence not found, or Contact not found' },
      },
    })
    .input(sequenceParam.extend({ contactId: z.string().describe('The contact id (UUID).') }))
    .output(z.object({ enrolled: z.boolean(), run: runSchema.nullable() }))
    .query(({ ctx, input }) =>
      enrollmentStatus(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactId: input.contactId }),
    ),
});

