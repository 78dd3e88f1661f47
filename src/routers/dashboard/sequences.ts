import { z } from 'zod';
import { SEQUENCE_STATUSES } from '../../schemas/statuses';
import { runFilters, runListInputSchema, sequenceListInputSchema } from '../../schemas/list-queries';
import { contactIdsSchema, definitionInputSchema, moveRunsSchema } from '../../schemas/sequence';
import { text } from '../../schemas/text';
import { deleteSequence } from '../../services/sequences/delete-sequence';
import { enrollByIds } from '../../services/sequences/enroll-by-ids';
import { getSequence, listSequences } from '../../services/sequences/list-sequences';
import { listSequenceRuns } from '../../services/sequences/list-runs';
import { sequenceNames } from '../../services/sequences/sequence-names';
import { MAX_LIST_LIMIT } from '../../schemas/list';
import { countRunPositions } from '../../services/sequences/run-positions';
import { changeSequence, createSequence, setSequenceStatus } from '../../services/sequences/sequence-admin';
import { listVersions } from '../../services/sequences/version-history';
import { statsDaysSchema } from '../../schemas/sequence-stats';
import { recentActivity, sequenceStats } from '../../services/analytics/sequence-stats';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// The Sequences pages: the list API's services, and the CLI's sequence:create,
// sequence:set-status and sequence:delete (the same rules), always within the signed-in account.
// The builder saves through `update`, PATCH /sequences/{id}'s input and service: the same
// definition rules, the same 400 details (steps.2.subject), the same moveRuns.

const sequenceParam = z.object({ id: z.string() });
const name = text().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const status = z.enum(SEQUENCE_STATUSES);

export const dashboardSequencesRouter = router({
  list: sessionProcedure.input(sequenceListInputSchema).query(async ({ ctx, input }) => {
    const page = await listSequences(ctx.db, { ...input, accountId: ctx.accountId });
    return { sequences: page.items, nextCursor: page.nextCursor };
  }),

  get: sessionProcedure
    .input(sequenceParam)
    .query(async ({ ctx, input }) => ({ sequence: await getSequence(ctx.db, { ...input, accountId: ctx.accountId }) })),

  runs: sessionProcedure.input(runListInputSchema.extend(sequenceParam.shape)).query(async ({ ctx, input }) => {
    const page = await listSequenceRuns(ctx.db, { ...runFilters(input), accountId: ctx.accountId, sequenceId: input.id });
    return { runs: page.items, nextCursor: page.nextCursor };
  }),

  // Names for the sequences of a page of runs (a contact's), archived ones too.
  names: sessionProcedure
    .input(z.object({ ids: z.array(z.string().max(64)).max(MAX_LIST_LIMIT, `At most ${MAX_LIST_LIMIT} ids`) }))
    .query(async ({ ctx, input }) => ({ names: await sequenceNames(ctx.db, { ...input, accountId: ctx.accountId }) })),

  // The sequence page's counts of active runs at each step, older versions included.
  positions: sessionProcedure.input(sequenceParam).query(async ({ ctx, input }) => ({
    positions: await countRunPositions(ctx.db, { accountId: ctx.accountId, sequenceId: input.id }),
  })),

  // The analytics panel: the API's GET /sequences/{id}/stats.
  stats: sessionProcedure.input(sequenceParam.extend({ days: statsDaysSchema })).query(async ({ ctx, input }) => ({
    stats: await sequenceStats(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, days: input.days }),
  })),

  // The list's last-7-days figures for the page of sequences it shows (at most a page).
  activity: sessionProcedure.input(z.object({ ids: z.array(z.string()).max(100, 'at most 100 ids') })).query(async ({ ctx, input }) => ({
    sequences: await recentActivity(ctx.db, { accountId: ctx.accountId, sequenceIds: input.ids }),
  })),

  // "Enroll" from a contact or the selected contacts of the list: the API's enroll by ids.
  enroll: sessionProcedure
    .input(z.object({ id: z.string(), contactIds: contactIdsSchema }))
    .mutation(({ ctx, input }) => enrollByIds(ctx.db, { accountId: ctx.accountId, sequenceId: input.id, contactIds: input.contactIds })),

  // The version history: every version's steps, newest first.
  versions: sessionProcedure.input(sequenceParam).query(async ({ ctx, input }) => ({
    versions: await listVersions(ctx.db, { accountId: ctx.accountId, sequenceId: input.id }),
  })),

  // "Create sequence" (a name and a status) and the empty list's example sequence (with steps).
  create: sessionProcedure
    .input(z.object({ name, status: status.default('draft') }).extend(definitionInputSchema.shape))
    .mutation(async ({ ctx, input }) => ({ sequence: await createSequence(ctx.db, { ...input, accountId: ctx.accountId, channels: ctx.channels }) })),

  // "Delete" on the page of a sequence that never had a run; one with runs is a 409.
  delete: sessionProcedure.input(z.object({ id: z.guid('must be a UUID') })).mutation(async ({ ctx, input }) => {
    await deleteSequence(ctx.db, { id: input.id, accountId: ctx.accountId });
    return { deleted: true };
  }),

  // The builder's saves: steps (a new version), exit rules, the sending window, and moveRuns.
  update: sessionProcedure
    .input(sequenceParam.extend({ name: name.optional(), moveRuns: moveRunsSchema.optional() }).extend(definitionInputSchema.shape))
    .mutation(async ({ ctx, input }) => {
      const { sequence, moved } = await changeSequence(ctx.db, { ...input, accountId: ctx.accountId, channels: ctx.channels });
      return { sequence, moved };
    }),

  setStatus: sessionProcedure
    .input(z.object({ id: z.uuid('must be a UUID'), status }))
    .mutation(async ({ ctx, input }) => ({
      sequence: await setSequenceStatus(ctx.db, { ...input, accountId: ctx.accountId, channels: ctx.channels }),
    })),
});
