import { z } from 'zod';
import { contactFieldsSchema } from '../schemas/contact';
import { contactIdsSchema, enrollmentSchema, enrollOutcomeSchema, enrollSummarySchema, runSchema } from '../schemas/sequence';
import { enrollByIds } from '../services/sequences/enroll-by-ids';
import { enrollContact } from '../services/sequences/enroll-contact';
import { enrollmentStatus } from '../services/sequences/enrollment-status';
import { unenroll } from '../services/sequences/unenroll';
import { getSequence, listSequences } from '../services/sequences/list-sequences';
import { listSequenceRuns } from '../services/sequences/list-runs';
import {
  runFilters,
  runListInputSchema,
  runListOutputSchema,
  sequenceListInputSchema,
  sequenceListOutputSchema,
} from '../schemas/list-queries';
import { sequenceSchema } from '../schemas/sequence';
import { accountProcedure, router } from '../trpc/init';

const TAGS = ['Sequences'];
const sequenceParam = z.object({ id: z.string().describe('The sequence id (UUID).') });

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
          'Filter by `status`; walk the pages with `nextCursor`.',
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
        description: 'The sequence, its status and its number of active runs (pending, running or paused).',
        protect: true,
        errorResponses: { 404: 'Sequence not found' },
      },
    })
    .input(sequenceParam)
    .output(z.object({ sequence: sequenceSchema }))
    .query(async ({ ctx, input }) => ({ sequence: await getSequence(ctx.db, { ...input, accountId: ctx.accountId }) })),

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
          '`active`. Every outcome is 202: enrolled, `active_run_exists`, or `sequence_limit_reached`; the ' +
          'contact upsert stands in all three.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
      },
      successStatus: 202,
    })
    .input(sequenceParam.extend({ contact: contactFieldsSchema.describe('The contact to upsert, by email.') }))
    .output(enrollOutcomeSchema)
    .mutation(({ ctx, input }) =>
      enrollContact(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contact: input.contact }),
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
          'the account, and contacts over the account\'s active-run limit, count as failed; `summary.failures` ' +
          'names each, with its reason, in request order.',
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
      enrollByIds(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactIds: input.contactIds }),
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
          'already has an active run, or the account\'s active-run limit is reached.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
        successDescription: 'Not enrolled: `active_run_exists` or `sequence_limit_reached`',
      },
      successStatus: 200,
      alternateSuccess: { status: 201, description: 'Enrolled: a new run was started' },
    })
    .input(contactFieldsSchema.extend(sequenceParam.shape))
    .output(enrollOutcomeSchema)
    .mutation(async ({ ctx, input }) => {
      const { id, ...contact } = input;
      const outcome = await enrollContact(ctx.db, { accountId: ctx.accountId, sequenceId: id, contact });
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
      unenroll(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactIds: input.contactIds }),
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

