import { z } from 'zod';
import {
  suppressionAddInputSchema,
  suppressionAddOutputSchema,
  suppressionKeySchema,
  suppressionListInputSchema,
  suppressionListOutputSchema,
  suppressionSchema,
} from '../schemas/suppression';
import { addSuppressionList, deleteSuppression, getSuppression, listSuppressions } from '../services/suppressions/suppression-operations';
import { accountProcedure, router } from '../trpc/init';

const TAGS = ['Suppressions'];
const NOT_FOUND = { 404: 'Suppression not found' };
const BAD_ADDRESS = 'Not an address of the channel (an email address, or a phone number in international form)';

// No static path clashes with /suppressions/{channel}/{address}: the list and the add are on
// /suppressions itself.
export const suppressionsRouter = router({
  add: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/suppressions',
        tags: TAGS,
        summary: 'Add addresses to the suppression list',
        description:
          '1 to 1,000 items. A message step to a suppressed address (on that channel) is skipped with reason `suppressed`; ' +
          'the contact stays enrollable. An address already on the list keeps its first reason and source. The items are ' +
          'checked whole first: one bad item is a 400 whose `details` name each bad one (`suppressions.N.address`), and nothing ' +
          'is written. `reason` defaults to `manual`; the source is `api_key:<the key\'s id>`.',
        protect: true,
        errorResponses: { 400: 'An item is invalid (details name it: suppressions.N.field)' },
      },
      successStatus: 201,
    })
    .input(suppressionAddInputSchema)
    .output(suppressionAddOutputSchema)
    .mutation(async ({ ctx, input }) => ({
      summary: await addSuppressionList(ctx.db, { accountId: ctx.accountId, suppressions: input.suppressions, source: `api_key:${ctx.keyId}` }),
    })),

  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/suppressions',
        tags: TAGS,
        summary: 'List the suppression list',
        description:
          'Newest first by `createdAt` (ties by `id`). Filters combine: `channel`, `reason`, and `address` (one address, ' +
          'normalized as stored; in every channel it is an address of unless `channel` is given). Walk the pages with `nextCursor`.',
        protect: true,
      },
    })
    .input(suppressionListInputSchema)
    .output(suppressionListOutputSchema)
    .query(async ({ ctx, input }) => {
      const page = await listSuppressions(ctx.db, { ...input, accountId: ctx.accountId });
      return { suppressions: page.items, nextCursor: page.nextCursor };
    }),

  get: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/suppressions/{channel}/{address}',
        tags: TAGS,
        summary: 'Get a suppression',
        description: 'By channel and address (percent-encoded: `ada%40example.com`, `%2B4915112855001`), normalized as stored first.',
        protect: true,
        errorResponses: { 400: BAD_ADDRESS, ...NOT_FOUND },
      },
    })
    .input(suppressionKeySchema)
    .output(z.object({ suppression: suppressionSchema }))
    .query(async ({ ctx, input }) => ({ suppression: await getSuppression(ctx.db, { ...input, accountId: ctx.accountId }) })),

  remove: accountProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/suppressions/{channel}/{address}',
        tags: TAGS,
        summary: 'Remove a suppression',
        description:
          'Lifts it: the next message step to the address sends again (a contact\'s own unsubscribe still holds). ' +
          'Records `contact.unsuppressed` for each contact with the address.',
        protect: true,
        errorResponses: { 400: BAD_ADDRESS, ...NOT_FOUND },
        successDescription: 'Removed; no body',
      },
      successStatus: 204,
    })
    .input(suppressionKeySchema)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await deleteSuppression(ctx.db, { ...input, accountId: ctx.accountId });
    }),
});
