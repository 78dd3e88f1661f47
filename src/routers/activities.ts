import { activityBatchInputSchema, activityBatchOutputSchema, activityInputSchema, acceptedActivitySchema } from '../schemas/activity';
import { z } from 'zod';
import { ACTIVITY_CONFLICT } from '../errors/app-errors';
import { DEFAULT_ACTIVITY_SETTINGS } from '../services/activities/activity-settings';
import { recordActivities } from '../services/activities/record-activities';
import { accountProcedure, router } from '../trpc/init';

const TAGS = ['Activities'];

// The contact's own events (docs/activities.md). The static /activities/batch is declared before
// anything under /activities/{...} could be (the REST adapter takes the first path that matches).
// GET /contacts/{id}/activities is in the contacts router, beside the contact's other lists.
export const activitiesRouter = router({
  record: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/activities',
        tags: TAGS,
        summary: 'Record an activity of a contact',
        description:
          'Stores what a contact did. The contact is named by `email` (created when new, as the trigger\'s upsert does) ' +
          'or by `id` (404 when unknown). An `id` already stored with the same name and properties is a no-op that answers ' +
          'the stored activity with `duplicate: true`; with another name or properties it is a 409 `activity_conflict`. ' +
          'A bad field is a 400 naming it; nothing is written.',
        protect: true,
        errorResponses: { 404: 'Contact not found', 409: ACTIVITY_CONFLICT },
      },
      successStatus: 202,
    })
    .input(activityInputSchema)
    .output(z.object({ activity: acceptedActivitySchema }))
    .mutation(async ({ ctx, input }) => {
      const [activity] = await recordActivities(
        ctx.db,
        { accountId: ctx.accountId, activities: [input], batch: false, idempotency: ctx.idempotency },
        ctx.activities ?? DEFAULT_ACTIVITY_SETTINGS,
      );
      return { activity: activity! };
    }),

  batch: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/activities/batch',
        tags: TAGS,
        summary: 'Record up to 500 activities at once',
        description:
          'Each item as POST /activities takes it. Validated whole first and applied atomically: one bad item is a 400 naming ' +
          '`activities.N.<field>` (an unknown `contact.id` too), one conflicting id a 409 `activity_conflict` naming ' +
          '`activities.N.id`, and nothing is written. Two items with one id: the second is a duplicate of the first when ' +
          'name and properties are the same, a 409 when not. The answer lists every item in request order.',
        protect: true,
        errorResponses: { 409: ACTIVITY_CONFLICT },
      },
      successStatus: 202,
    })
    .input(activityBatchInputSchema)
    .output(activityBatchOutputSchema)
    .mutation(async ({ ctx, input }) => {
      const recorded = await recordActivities(
        ctx.db,
        { accountId: ctx.accountId, activities: input.activities, batch: true, idempotency: ctx.idempotency },
        ctx.activities ?? DEFAULT_ACTIVITY_SETTINGS,
      );
      const duplicates = recorded.filter((activity) => activity.duplicate).length;
      return {
        summary: { total: recorded.length, accepted: recorded.length - duplicates, duplicates },
        activities: recorded.map(({ id, contactId, duplicate }) => ({ id, contactId, duplicate })),
      };
    }),
});
