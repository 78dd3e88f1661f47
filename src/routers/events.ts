import { z } from 'zod';
import { eventSchema, eventTypeSchema } from '../schemas/event';
import { listEvents } from '../services/events/list-events';
import { accountProcedure, router } from '../trpc/init';

export const MAX_EVENTS_PAGE = 200;
const DEFAULT_EVENTS_PAGE = 50;

export const eventsRouter = router({
  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/events',
        tags: ['Events'],
        summary: 'Read the account\'s events, in commit order',
        description:
          'The changes of the account, oldest first, in the order they committed. Page with `after`: pass the ' +
          '`nextCursor` of the previous answer. `nextCursor` is never null: on the last page (short or empty) it is ' +
          'where you stand, so keep it and poll again with it to receive what commits next. An event that commits ' +
          'after you read never lands before your cursor, so polling this way misses none and repeats none. ' +
          'Events are kept 30 days by default (EVENT_RETENTION_DAYS).',
        protect: true,
        errorResponses: { 400: 'Bad cursor, type or limit' },
      },
    })
    .input(
      z.strictObject({
        // (The documentation goes inside .optional(): the query parameters show only the inner meta.)
        after: z
          .string()
          .meta({
            description: 'A `nextCursor` from a previous answer. Without it, the feed starts at the oldest event kept.',
            example: 'ZXYxOjQy',
          })
          .optional(),
        type: eventTypeSchema.meta({ description: 'Only events of this type.', example: 'contact.updated' }).optional(),
        limit: z.coerce
          .number()
          .int('limit must be an integer')
          .min(1, 'limit must be at least 1')
          .max(MAX_EVENTS_PAGE, `limit must be at most ${MAX_EVENTS_PAGE}`)
          .meta({ description: `Events per page, 1 to ${MAX_EVENTS_PAGE}; default ${DEFAULT_EVENTS_PAGE}.`, example: 100 })
          .optional(),
      }),
    )
    .output(
      z.object({
        events: z.array(eventSchema).describe('Oldest first; at most `limit`.'),
        nextCursor: z
          .string()
          .describe('Pass as `after` for the next page, or to poll for new events; never null.')
          .meta({ example: 'ZXYxOjQz' }),
      }),
    )
    .query(({ ctx, input }) =>
      listEvents(ctx.db, {
        accountId: ctx.accountId,
        after: input.after,
        type: input.type,
        limit: input.limit ?? DEFAULT_EVENTS_PAGE,
      }),
    ),
});
