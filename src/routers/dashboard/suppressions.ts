import { suppressionAddInputSchema, suppressionKeySchema, suppressionListInputSchema } from '../../schemas/suppression';
import { addSuppressionList, deleteSuppression, listSuppressions } from '../../services/suppressions/suppression-operations';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// Audience -> Suppressions: the API's input schemas and services (docs/channels.md
// "Suppressions"), always within the signed-in account; what a person adds has the source
// `user:<their id>`.

export const dashboardSuppressionsRouter = router({
  list: sessionProcedure.input(suppressionListInputSchema).query(async ({ ctx, input }) => {
    const page = await listSuppressions(ctx.db, { ...input, accountId: ctx.accountId });
    return { suppressions: page.items, nextCursor: page.nextCursor };
  }),

  add: sessionProcedure
    .input(suppressionAddInputSchema)
    .mutation(async ({ ctx, input }) => ({
      summary: await addSuppressionList(ctx.db, { accountId: ctx.accountId, suppressions: input.suppressions, source: `user:${ctx.user.userId}` }),
    })),

  remove: sessionProcedure
    .input(suppressionKeySchema)
    .mutation(async ({ ctx, input }) => ({ suppression: await deleteSuppression(ctx.db, { ...input, accountId: ctx.accountId }) })),
});
